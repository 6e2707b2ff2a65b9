package pki_test

import (
	"net/url"
	"testing"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// FuzzParseIdentityURI: any URI either parses into an identity that renders
// back to itself, or is refused; it never panics.
func FuzzParseIdentityURI(f *testing.F) {
	f.Add("spiffe://bloodraven.shipstream.io/operator")
	f.Add("spiffe://bloodraven.shipstream.io/ns/shop/group/orders/site/iad")
	f.Add("spiffe://bloodraven.shipstream.io/ns/a/group/b/site/c/d")
	f.Add("spiffe://bloodraven.shipstream.io/ns/%2e%2e/group/b/site/c")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		id, err := pki.ParseIdentityURI(u)
		if err != nil {
			return
		}
		back, err := pki.ParseIdentityURI(id.URI())
		if err != nil || back != id {
			t.Fatalf("%q parsed as %+v, which does not round-trip: %+v %v", raw, id, back, err)
		}
	})
}

// FuzzParsePEM: malformed PEM never panics the parsers.
func FuzzParsePEM(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = pki.ParseCertificates(data)
		_, _ = pki.ParseKey(data)
		_, _ = pki.LoadCA(data, data, data)
	})
}
