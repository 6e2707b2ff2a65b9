// Package supervisor owns one running local cluster: it makes the core
// network namespace and the PKI, starts etcd, the API server, the controller
// manager, the scheduler, BIND and external-dns as processes inside that
// namespace, runs the process nodes, the Service proxy, cluster DNS and the
// volume provisioner in-process, serves fault controls on a Unix socket, and
// tears everything down again. localcluster starts it as a child process.
package supervisor
