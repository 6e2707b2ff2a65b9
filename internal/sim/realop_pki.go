package sim

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// simPKI is the sim's certificate authority and one client certificate
// per site, issued once per process: the real operator's ReportAuth
// checks every report against them, as it checks the TLS peer in a
// cluster. Validity is judged on the wall clock (ReportAuth reads it);
// certificates are issued at start, so no run sees one expire.
var simPKI = sync.OnceValues(func() (*pki.CA, map[string]*x509.Certificate) {
	now := time.Now()
	ca, err := pki.NewCA("bloodraven-sim", now, 24*time.Hour)
	if err != nil {
		panic(fmt.Sprintf("sim CA: %v", err))
	}
	certs := map[string]*x509.Certificate{}
	for _, name := range siteNames {
		is, err := ca.Issue(pki.Request{Identity: pki.SiteIdentity(simGroup, simGroup, name)}, now)
		if err != nil {
			panic(fmt.Sprintf("sim site certificate: %v", err))
		}
		certs[name] = is.Cert
	}
	return ca, certs
})

// simTLS is the TLS state of a request from site's sidecar.
func simTLS(site string) *tls.ConnectionState {
	_, certs := simPKI()
	return &tls.ConnectionState{HandshakeComplete: true, PeerCertificates: []*x509.Certificate{certs[site]}}
}

// simTrust is the operator's CA bundle.
func simTrust() (*x509.CertPool, error) { return simTrustPool(), nil }

// simTrustPool is the CA bundle plus the sites' own certificates, built
// once. x509 takes a certificate found in the roots as trusted by itself,
// so a site's certificate is accepted without checking the CA's signature
// on it again for every report (which cost a tenth of a real-operator
// run). For every certificate the sim presents the answer is the one the
// CA alone gives: each is the CA's, valid for the whole process, and its
// validity period and key usage are still checked; a certificate of
// another CA is still refused.
var simTrustPool = sync.OnceValue(func() *x509.CertPool {
	ca, certs := simPKI()
	pool := ca.Pool()
	for _, name := range siteNames {
		pool.AddCert(certs[name])
	}
	return pool
})

// realReport is the report of a sidecar of site holding gen with its
// mysqld read-only, and no echo: what a forger sends.
func realReport(site string, gen int64) sidecar.Report {
	return sidecar.Report{Site: site, Generation: gen, DB: sidecar.DBReadOnly, Boot: "forged"}
}
