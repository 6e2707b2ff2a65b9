package sidecar_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestCloneEndpoint: a donor sidecar without TLS refuses every clone on
// its plain port, counted; with TLS its peer port serves the group's other
// sites and refuses another group's. Without Config.Clone there is no
// endpoint at all. The donor's own command never runs here: the refusals
// stop first, and the one allowed request finds no mysqld to back up.
func TestCloneEndpoint(t *testing.T) {
	donor := &clone.Donor{Socket: "/nonexistent.sock", Backup: "/bin/false", Logger: quietLogger()}
	newRunner := func(src pki.Source, d *clone.Donor) *sidecar.Runner {
		r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
			LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys},
			OperatorURL: "https://127.0.0.1:1", Logger: quietLogger(), TLS: src, Clone: d}, &fakeDB{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	get := func(c *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Trailer.Get(clone.TrailerResult)
	}

	t.Run("plain port refuses everyone", func(t *testing.T) {
		r := newRunner(nil, donor)
		s := httptest.NewServer(r.Handler())
		defer s.Close()
		if code, _ := get(s.Client(), s.URL+clone.PathClone); code != http.StatusForbidden {
			t.Fatalf("status %d, want 403", code)
		}
		metrics := httptest.NewRecorder()
		r.Handler().ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, sidecar.PathMetrics, nil))
		if want := clone.MetricRejectedClones + `{reason="no-tls"} 1`; !strings.Contains(metrics.Body.String(), want) {
			t.Fatalf("metrics lack %q", want)
		}
	})
	t.Run("no donor, no endpoint", func(t *testing.T) {
		s := httptest.NewServer(newRunner(nil, nil).Handler())
		defer s.Close()
		if code, _ := get(s.Client(), s.URL+clone.PathClone); code != http.StatusNotFound {
			t.Fatalf("status %d, want 404", code)
		}
	})
	t.Run("peer port", func(t *testing.T) {
		b := newTLSBed(t)
		iad := pki.SiteIdentity("shop", "orders", "iad")
		self := b.source(t, b.ca, iad)
		url := serve(t, self, newRunner(self, donor).PeerHandler()) + clone.PathClone
		as := func(id pki.Identity) *http.Client {
			return &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(b.source(t, b.ca, id), iad, time.Now)}}
		}
		if code, _ := get(as(pki.SiteIdentity("shop", "billing", "pdx")), url); code != http.StatusForbidden {
			t.Fatalf("another group's site: status %d, want 403", code)
		}
		code, result := get(as(pki.SiteIdentity("shop", "orders", "pdx")), url)
		if code != http.StatusOK || !strings.HasPrefix(result, "error: ") {
			t.Fatalf("a peer: status %d, result %q; want 200 and the failed backup in the trailer", code, result)
		}
	})
}
