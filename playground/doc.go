// Package playground holds a whole local deployment of Bloodraven: a real
// Kubernetes control plane whose Pods are local processes (see localcluster),
// and the chaos scenarios that run against it.
package playground
