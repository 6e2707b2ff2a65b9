package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync"
	"time"
)

// Keeper holds the operator's CA and its own certificate in memory. The
// certificate (identity operator, the API's DNS names) serves the API and
// is presented when the operator calls sidecars; it is issued on first use
// and again whenever NeedsRenewal says so, so a long-running operator never
// serves an expired one. SetCA swaps the CA after a rotation.
type Keeper struct {
	now func() time.Time
	req Request

	mu   sync.Mutex
	ca   *CA
	cert *tls.Certificate
}

// NewKeeper returns a Keeper that issues req from ca.
func NewKeeper(ca *CA, req Request, now func() time.Time) *Keeper {
	return &Keeper{ca: ca, req: req, now: now}
}

// CA is the current CA.
func (k *Keeper) CA() *CA {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ca
}

// SetCA replaces the CA; the next handshake renews the certificate if the
// new CA did not sign it.
func (k *Keeper) SetCA(ca *CA) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ca = ca
}

// Certificate implements Source.
func (k *Keeper) Certificate() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if k.cert != nil && !NeedsRenewal(k.cert.Leaf, k.ca, k.req, now) {
		return k.cert, nil
	}
	is, err := k.ca.Issue(k.req, now)
	if err != nil {
		if k.cert != nil {
			return k.cert, nil // keep serving the old one; it is still valid for a while
		}
		return nil, fmt.Errorf("operator certificate: %w", err)
	}
	c, err := is.TLS()
	if err != nil {
		return nil, err
	}
	k.cert = &c
	return k.cert, nil
}

// Pool implements Source.
func (k *Keeper) Pool() (*x509.CertPool, error) { return k.CA().Pool(), nil }

// SiteRequest is the certificate request of one site: its identity, and
// the DNS names of its Services so that mysqld can serve it too.
func SiteRequest(namespace, group, site string, dnsNames []string) Request {
	return Request{Identity: SiteIdentity(namespace, group, site), DNSNames: dnsNames}
}

// PlanSecret decides a TLS Secret's data: data is what the Secret holds now
// (nil when it does not exist). It returns the data to write and whether it
// differs. A certificate that NeedsRenewal, or a missing or unreadable one,
// is issued anew; a good one keeps its key and only gets the current CA
// bundle.
func PlanSecret(data map[string][]byte, ca *CA, req Request, now time.Time) (map[string][]byte, bool, error) {
	bundle := ca.BundlePEM()
	if cur := leafOf(data); cur != nil && !NeedsRenewal(cur, ca, req, now) {
		if bytes.Equal(data[SecretKeyCA], bundle) {
			return data, false, nil
		}
		out := map[string][]byte{SecretKeyCert: data[SecretKeyCert], SecretKeyKey: data[SecretKeyKey], SecretKeyCA: bundle}
		return out, true, nil
	}
	is, err := ca.Issue(req, now)
	if err != nil {
		return nil, false, err
	}
	return map[string][]byte{SecretKeyCert: is.CertPEM, SecretKeyKey: is.KeyPEM, SecretKeyCA: bundle}, true, nil
}

// leafOf parses a Secret's certificate, or nil when it is missing, broken
// or does not match its key.
func leafOf(data map[string][]byte) *x509.Certificate {
	if data == nil {
		return nil
	}
	c, err := tls.X509KeyPair(data[SecretKeyCert], data[SecretKeyKey])
	if err != nil {
		return nil
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}
