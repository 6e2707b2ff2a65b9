package sidecar_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

type noReclone struct{}

func (noReclone) Stop(context.Context) error  { return nil }
func (noReclone) Start(context.Context) error { return nil }

// TestRecloneEndpoint: with Config.Reclone the peer port serves the
// reclone endpoint to the operator; before the sidecar relays a view it
// refuses (503); a peer site is refused (403). Without it: 404, which the
// operator takes for a sidecar that cannot reclone.
func TestRecloneEndpoint(t *testing.T) {
	b := newTLSBed(t)
	pdx := pki.SiteIdentity("shop", "orders", "pdx")
	self := b.source(t, b.ca, pdx)
	newRunner := func(ex *reclone.Executor) *sidecar.Runner {
		r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "pdx",
			LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys},
			OperatorURL: "https://127.0.0.1:1", Logger: quietLogger(), TLS: self, Reclone: ex}, &fakeDB{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	as := func(id pki.Identity) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(b.source(t, b.ca, id), pdx, time.Now)}}
	}
	post := func(c *http.Client, url string) int {
		t.Helper()
		resp, err := c.Post(url+reclone.PathReclone, "application/json",
			bytes.NewBufferString(`{"id":"pdx:confirm=orders@1","phase":"Requested","generation":1}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	ex := &reclone.Executor{Site: "pdx", Group: "orders", Dir: t.TempDir(), DataDir: t.TempDir(), PreserveRoot: t.TempDir(),
		DB: nil, Mysqld: noReclone{}, Receiver: func(string) (*clone.Receiver, error) { return nil, nil }}
	if url := serve(t, self, newRunner(ex).PeerHandler()); post(as(pki.OperatorIdentity()), url) != http.StatusNotFound {
		t.Fatal("an Executor without a mysqld connection was served")
	}
	ex.DB = recloneDB{&fakeDB{}}
	url := serve(t, self, newRunner(ex).PeerHandler())
	if got := post(as(pki.OperatorIdentity()), url); got != http.StatusServiceUnavailable {
		t.Fatalf("the operator before any view: %d, want 503", got)
	}
	if got := post(as(pki.SiteIdentity("shop", "orders", "iad")), url); got != http.StatusForbidden {
		t.Fatalf("a peer site: %d, want 403", got)
	}
	if got := post(as(pki.OperatorIdentity()), serve(t, self, newRunner(nil).PeerHandler())); got != http.StatusNotFound {
		t.Fatalf("without Config.Reclone: %d, want 404", got)
	}
}

type recloneDB struct{ *fakeDB }

func (recloneDB) StopReplication(context.Context) error      { return nil }
func (recloneDB) SeedPosition(context.Context, string) error { return nil }
