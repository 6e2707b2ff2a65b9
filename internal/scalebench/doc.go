// Package scalebench is test tooling for issue 21: it runs the real
// operator binary against an envtest API server and N groups of two
// MySQL-protocol stand-ins (internal/standin), and measures how the
// operator keeps up: pass start lag, CPU, memory and status writes.
//
// The operator reaches each site at its Service name, as in a cluster:
// every stand-in listens on its own loopback address (127.X.Y.Z:3306),
// and the operator runs under `unshare --mount` with a hosts file bound
// over /etc/hosts that maps each Service name to its stand-in. That needs
// root, which the bench machine gives.
//
// Sidecars are absent: no reports, nudges or peer traffic. The operator
// makes no site writable without a sidecar asking, so every group starts
// in its steady state: the first site a writable primary whose GTID
// advances, the second read-only and replicating from it.
package scalebench
