// Package kubelet owns the process kubelet: a virtual-kubelet provider that
// runs every container of a Pod as a local process. Each Pod gets its own
// network namespace with an IP from its node's range, linked to the core
// namespace by a veth pair; each container gets a private mount namespace
// with the Pod's volumes bound at their declared paths; ConfigMap, Secret,
// downward API and projected volumes are kept up to date while the Pod runs
// (refresh.go). Probes, restarts with
// backoff, logs and Pod status follow the kubelet's rules closely enough for
// the end-to-end tests.
package kubelet
