// Package dns owns the external DNS of the local cluster: an authoritative
// BIND zone that accepts TSIG-signed dynamic updates, and external-dns with
// the rfc2136 provider publishing DNSEndpoint objects into it.
package dns
