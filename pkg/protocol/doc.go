// Package protocol owns the integrity of the topology protocol's views: the
// canonical bytes an ActiveSiteView is signed over, Ed25519 signing and
// verification, the ring of public keys a sidecar accepts (at most two, so a
// key can be rotated without a moment when a valid view is refused), and the
// PEM forms in which keys are stored in Secrets and ConfigMaps.
//
// It is pure: no I/O, no clock. The operator signs every view it serves with a
// Signer; a sidecar adopts a view, or lets it renew its lease, only when a
// KeyRing verifies it. A sidecar never signs: it relays the operator's view
// byte for byte in every signed field, so a view learned from a peer is
// exactly as trustworthy as one from the operator.
//
// The payload covers namespace, group, activeSite, generation, observedAt (in
// UTC, RFC 3339 with nanoseconds), the serving operator's process id and the
// key id, each length-prefixed after a version tag, so no two different views
// share a payload. Source is not signed: it is where a relay learned the
// view, which the relay keeps in its own state.
package protocol
