// Package localcluster starts and drives a local Kubernetes cluster whose
// Pods are real local processes, for the playground and end-to-end tests.
//
// Up starts a supervisor process (a re-execution of the calling binary, so
// every main and TestMain that uses this package must call Init first). The
// supervisor runs etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, BIND and external-dns inside a dedicated network
// namespace, and one process node (a virtual-kubelet provider) per site.
// Cluster has the kubeconfig for the host and methods for faults: kill or
// freeze a container, stop or start a site's node, partition and heal.
// Down, an interrupt, or the death of the calling process removes every
// process, namespace, nft table and mount point the cluster made.
//
// See docs/localcluster.md for the networking model and its limits.
package localcluster
