package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"
)

// Verify checks that chain (leaf first, as a TLS peer sends it) chains to
// roots at now for usage, and returns the leaf's identity.
func Verify(chain []*x509.Certificate, roots *x509.CertPool, now time.Time, usage x509.ExtKeyUsage) (Identity, error) {
	if len(chain) == 0 {
		return Identity{}, ErrNoCertificate
	}
	if roots == nil {
		return Identity{}, fmt.Errorf("%w: no CA bundle", ErrUntrusted)
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{usage}})
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	return IdentityOf(chain[0])
}

// PeerIdentity verifies the client certificate of a TLS connection (a
// server asks for one without verifying it in the handshake, so that a bad
// one reaches the handler and can be refused there, counted and logged).
// No connection or no certificate gives ErrNoCertificate.
func PeerIdentity(cs *tls.ConnectionState, roots *x509.CertPool, now time.Time) (Identity, error) {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return Identity{}, ErrNoCertificate
	}
	return Verify(cs.PeerCertificates, roots, now, x509.ExtKeyUsageClientAuth)
}

// Expect returns an error wrapping ErrWrongIdentity unless got is want.
func Expect(got, want Identity) error {
	if got != want {
		return fmt.Errorf("%w: got %s, want %s", ErrWrongIdentity, got, want)
	}
	return nil
}

// RenewBefore is how long before expiry a certificate is renewed: a third
// of its lifetime (30 days of the default 90), so a renewal that fails has
// weeks of retries before anything breaks.
func RenewBefore(cert *x509.Certificate) time.Duration {
	return cert.NotAfter.Sub(cert.NotBefore) / 3
}

// NeedsRenewal reports whether cert, issued by ca, should be replaced at
// now: it is in the last third of its life, or not signed by ca's current
// signing certificate (after a CA rotation), or its identity or DNS names
// differ from want's.
func NeedsRenewal(cert *x509.Certificate, ca *CA, want Request, now time.Time) bool {
	if cert == nil || ca == nil {
		return true
	}
	if !now.Before(cert.NotAfter.Add(-RenewBefore(cert))) || now.Before(cert.NotBefore) {
		return true
	}
	if cert.CheckSignatureFrom(ca.Cert) != nil {
		return true
	}
	id, err := IdentityOf(cert)
	if want.Identity.Kind != KindNone && (err != nil || id != want.Identity) {
		return true
	}
	return !sameStrings(cert.DNSNames, want.DNSNames)
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
