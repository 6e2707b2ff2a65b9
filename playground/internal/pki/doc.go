// Package pki owns the local cluster's certificates: a CA, serving and client
// certificates for the control plane, the service-account key pair, and the
// kubeconfig files that carry them. Everything is made with crypto/x509.
package pki
