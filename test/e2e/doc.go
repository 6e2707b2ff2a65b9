// Package e2e holds the end-to-end tests (build tag e2e, `make test-e2e`):
// the real operator, installed with the Helm chart, and real sidecars and
// MariaDB in Pods of playground/localcluster, a Kubernetes cluster whose Pods
// are local processes.
package e2e
