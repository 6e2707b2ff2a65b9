// Package casecret keeps the operator's CA in a Secret: it reads it, and
// creates it with a new CA when it is absent.
//
// It is apart from package pki so that the sidecar, which verifies
// certificates but never touches the API server, does not link the
// Kubernetes client libraries: they cost it resident memory.
package casecret
