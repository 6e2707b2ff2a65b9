// Command playground starts, drives and stops the local cluster of
// playground/localcluster from a shell: up, down, status, kill, freeze,
// thaw, node-stop, node-start, partition, heal, exec and kubeconfig.
package main
