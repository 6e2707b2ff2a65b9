package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Default lifetimes.
const (
	// CAValidity is the lifetime of a CA the operator makes.
	CAValidity = 10 * 365 * 24 * time.Hour
	// LeafValidity is the lifetime of every certificate the CA issues.
	LeafValidity = 90 * 24 * time.Hour
	// clockSkew back-dates NotBefore, so a certificate is valid at once on
	// machines whose clock is a little behind.
	clockSkew = 5 * time.Minute
)

// CA signs certificates. Bundle is what peers trust: the signing
// certificate first, then any retired CA certificate still trusted during
// a CA rotation.
type CA struct {
	Cert   *x509.Certificate
	Key    crypto.Signer
	Bundle []*x509.Certificate
}

// NewCA makes a self-signed CA valid from now for validity.
func NewCA(commonName string, now time.Time, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: commonName, Organization: []string{TrustDomain}},
		NotBefore: now.Add(-clockSkew), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, Bundle: []*x509.Certificate{cert}}, nil
}

// LoadCA reads a CA from PEM: its certificate, its key, and an optional
// bundle of further trusted CA certificates (the signing certificate is
// always trusted and always first in Bundle).
func LoadCA(certPEM, keyPEM, bundlePEM []byte) (*CA, error) {
	certs, err := ParseCertificates(certPEM)
	if err != nil || len(certs) != 1 {
		return nil, fmt.Errorf("ca certificate: %w (%d certificates)", errOr(err, ErrBadPEM), len(certs))
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	ca := &CA{Cert: certs[0], Key: key, Bundle: []*x509.Certificate{certs[0]}}
	if !ca.Cert.IsCA || ca.Cert.KeyUsage&x509.KeyUsageCertSign == 0 || !samePublic(ca.Cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("ca %q: %w", ca.Cert.Subject.CommonName, ErrNotCA)
	}
	if len(bytes.TrimSpace(bundlePEM)) > 0 {
		extra, err := ParseCertificates(bundlePEM)
		if err != nil {
			return nil, fmt.Errorf("ca bundle: %w", err)
		}
		for _, c := range extra {
			if !c.Equal(ca.Cert) {
				ca.Bundle = append(ca.Bundle, c)
			}
		}
	}
	return ca, nil
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

func samePublic(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}

// Pool is the bundle as a certificate pool.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range ca.Bundle {
		p.AddCert(c)
	}
	return p
}

// CertPEM is the signing certificate in PEM.
func (ca *CA) CertPEM() []byte { return EncodeCertificates(ca.Cert) }

// BundlePEM is the trust bundle in PEM, signing certificate first.
func (ca *CA) BundlePEM() []byte { return EncodeCertificates(ca.Bundle...) }

// KeyPEM is the signing key in PEM.
func (ca *CA) KeyPEM() ([]byte, error) { return EncodeKey(ca.Key) }

// Request is what a certificate is for.
type Request struct {
	// Identity goes into the URI SAN; KindNone issues none.
	Identity Identity
	// CommonName defaults to the identity's URI.
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	// Validity defaults to LeafValidity; it never outlives the CA.
	Validity time.Duration
}

// Issued is a certificate with its key, in PEM and parsed.
type Issued struct {
	CertPEM []byte // the leaf
	KeyPEM  []byte
	Cert    *x509.Certificate
}

// TLS is the pair as a tls.Certificate.
func (is Issued) TLS() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(is.CertPEM, is.KeyPEM)
	if err != nil {
		return c, fmt.Errorf("key pair: %w", err)
	}
	c.Leaf = is.Cert
	return c, nil
}

// Issue signs a new key pair for req, valid from now. Every certificate is
// good for both server and client authentication: a sidecar serves its
// peers and calls them with the same one.
func (ca *CA) Issue(req Request, now time.Time) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, fmt.Errorf("issue %s: key: %w", req.Identity, err)
	}
	serial, err := newSerial()
	if err != nil {
		return Issued{}, err
	}
	validity := req.Validity
	if validity <= 0 {
		validity = LeafValidity
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	cn := req.CommonName
	if cn == "" {
		cn = req.Identity.String()
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: []string{TrustDomain}},
		NotBefore: now.Add(-clockSkew), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    req.DNSNames, IPAddresses: req.IPs, BasicConstraintsValid: true,
	}
	if u := req.Identity.URI(); u != nil {
		tmpl.URIs = append(tmpl.URIs, u)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return Issued{}, fmt.Errorf("issue %s: %w", req.Identity, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Issued{}, fmt.Errorf("issue %s: %w", req.Identity, err)
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return Issued{}, err
	}
	return Issued{CertPEM: EncodeCertificates(cert), KeyPEM: keyPEM, Cert: cert}, nil
}

func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// EncodeCertificates renders certificates as concatenated PEM blocks.
func EncodeCertificates(certs ...*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

// EncodeKey renders a private key as a PKCS #8 PEM block.
func EncodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseCertificates reads every CERTIFICATE block; other blocks are skipped.
func ParseCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadPEM, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no certificate", ErrBadPEM)
	}
	return out, nil
}

// ParseKey reads the first private key block (PKCS #8, SEC 1 or PKCS #1).
func ParseKey(data []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("%w: no private key", ErrBadPEM)
		}
		var (
			k   any
			err error
		)
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadPEM, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: key type %T", ErrBadPEM, k)
		}
		return s, nil
	}
}
