package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// Source gives the current certificate and CA bundle; both may change
// while a program runs (renewal, CA rotation), so they are asked for at
// every handshake.
type Source interface {
	Certificate() (*tls.Certificate, error)
	Pool() (*x509.CertPool, error)
}

// ServerConfig is a TLS 1.3 server that serves src's certificate and asks
// clients for one without requiring it: the handler decides, with
// PeerIdentity, what each request needs.
func ServerConfig(src Source) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequestClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return src.Certificate()
		},
	}
}

// ClientConfig is a TLS 1.3 client that presents src's certificate and
// accepts a server only when its certificate chains to src's bundle for
// server use and names exactly want. Host names are not checked: the
// identity is (the same address may be reached under many names).
func ClientConfig(src Source, want Identity, now func() time.Time) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection checks chain and identity
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c, err := src.Certificate()
			if err != nil {
				// Present none: the server refuses what needs one, and
				// says so, instead of the handshake failing here.
				return &tls.Certificate{}, nil //nolint:nilerr // see above
			}
			return c, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			pool, err := src.Pool()
			if err != nil {
				return fmt.Errorf("verify server: %w", err)
			}
			got, err := Verify(cs.PeerCertificates, pool, now(), x509.ExtKeyUsageServerAuth)
			if err != nil {
				return fmt.Errorf("verify server: %w", err)
			}
			return Expect(got, want)
		},
	}
}

// StaticSource serves a fixed certificate and pool (tests, and the
// operator's in-memory credentials through Keeper).
type StaticSource struct {
	Cert  *tls.Certificate
	Roots *x509.CertPool
}

// Certificate implements Source.
func (s StaticSource) Certificate() (*tls.Certificate, error) {
	if s.Cert == nil {
		return nil, errors.New("no certificate")
	}
	return s.Cert, nil
}

// Pool implements Source.
func (s StaticSource) Pool() (*x509.CertPool, error) {
	if s.Roots == nil {
		return nil, errors.New("no CA bundle")
	}
	return s.Roots, nil
}
