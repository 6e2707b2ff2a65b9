// Command playground starts, drives and stops the local cluster of
// playground/localcluster from a shell: demo (make playground: the cluster
// with Bloodraven installed, a healthy group and a writer), up, down, status,
// kill, freeze, thaw, node-stop, node-start, partition, heal, exec,
// kubeconfig, writer and scenario.
package main
