package reclone_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// Test identities: iad donates, pdx is recloned.
var (
	iad = pki.SiteIdentity("shop", "orders", "iad")
	pdx = pki.SiteIdentity("shop", "orders", "pdx")
)

type pkiBed struct{ ca *pki.CA }

func newPKI(t testing.TB) pkiBed {
	t.Helper()
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	return pkiBed{ca: ca}
}

func (b pkiBed) source(t testing.TB, id pki.Identity) pki.StaticSource {
	t.Helper()
	is, err := b.ca.Issue(pki.Request{Identity: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := is.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return pki.StaticSource{Cert: &c, Roots: b.ca.Pool()}
}

// serveTLS serves h over TLS with src and returns its https URL.
func serveTLS(t testing.TB, src pki.Source, h http.Handler) string {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(src))
	s.Start()
	t.Cleanup(s.Close)
	return strings.Replace(s.URL, "http://", "https://", 1)
}

// httpClient presents src and expects the server to be want.
func httpClient(src pki.Source, want pki.Identity) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(src, want, time.Now)}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
