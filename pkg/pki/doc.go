// Package pki owns Bloodraven's certificates: one certificate authority
// (ECDSA P-256) that the operator keeps in a Secret, the certificates it
// issues (the operator's serving and client certificates, and one
// certificate per site, used by that site's sidecar as server and client
// and by its mysqld as server), the identities those certificates carry,
// when they are due for renewal, and the TLS 1.3 configurations that check
// them.
//
// An identity is a URI SAN under the trust domain bloodraven.shipstream.io:
//
//	spiffe://bloodraven.shipstream.io/operator
//	spiffe://bloodraven.shipstream.io/ns/<namespace>/group/<group>/site/<site>
//
// Peers are authenticated by that identity, not by host name: a client
// checks the chain against the CA bundle and then that the identity is the
// one it meant to reach, so a certificate of another site, or of another
// group, is refused even though the same CA issued it.
//
// The package reads no clock: every function that needs the time takes it.
// It has no Kubernetes code: package casecret keeps the CA in a Secret.
package pki
