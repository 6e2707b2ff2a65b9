package reclone_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// fakeDB is a read-only mysqld that answers.
type fakeDB struct {
	mu       sync.Mutex
	writable bool
	stops    int
}

func (f *fakeDB) Status(context.Context) (mysql.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return mysql.Status{Flavor: v1alpha1.FlavorMariaDB, ReadOnly: !f.writable}, nil
}
func (f *fakeDB) Fence(context.Context) error { return nil }
func (f *fakeDB) StopReplication(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	return nil
}
func (f *fakeDB) SeedPosition(context.Context, string) error { return nil }

type fakeMysqld struct{ stopped bool }

func (f *fakeMysqld) Stop(context.Context) error  { f.stopped = true; return nil }
func (f *fakeMysqld) Start(context.Context) error { f.stopped = false; return nil }

// unitExecutor has a donor that refuses every clone (a closed server), a
// datadir holding one file, and a view at generation 5 naming iad.
func unitExecutor(t *testing.T, src pki.Source) (*reclone.Executor, *fakeDB, *fakeMysqld) {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "ibdata1"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	t.Cleanup(refusing.Close)
	db, m := &fakeDB{}, &fakeMysqld{}
	e := &reclone.Executor{Namespace: "shop", Group: "orders", Site: "pdx", Dir: filepath.Join(root, "state"),
		DataDir: data, PreserveRoot: filepath.Join(root, "preserved"), DB: db, Mysqld: m, Donors: []string{"iad"},
		TLS: src, Logger: quiet(), View: func() (string, int64, bool) { return "iad", 5, true },
		Receiver: func(string) (*clone.Receiver, error) {
			return &clone.Receiver{URL: refusing.URL, Client: refusing.Client(), Logger: quiet()}, nil
		}}
	t.Cleanup(e.Wait)
	return e, db, m
}

func post(t *testing.T, c *http.Client, url string, body string) int {
	t.Helper()
	resp, err := c.Post(url+reclone.PathReclone, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestHandlerRefusals: only the operator's certificate passes; a
// malformed body, a view not held or behind, and a second reclone while
// one runs are refused with their status; nothing is recorded.
func TestHandlerRefusals(t *testing.T) {
	b, other := newPKI(t), newPKI(t)
	src := b.source(t, pdx)
	e, _, _ := unitExecutor(t, src)
	h, err := e.Handler(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	url := serveTLS(t, src, h)
	op := httpClient(b.source(t, pki.OperatorIdentity()), pdx)
	good := `{"id":"pdx:confirm=orders@1","phase":"Requested","generation":5}`
	cases := []struct {
		name   string
		client *http.Client
		body   string
		code   int
	}{
		{"no certificate", &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(pki.StaticSource{Roots: b.ca.Pool()}, pdx, time.Now)}}, good, 401},
		{"another CA", httpClient(pki.StaticSource{Cert: other.source(t, pki.OperatorIdentity()).Cert, Roots: b.ca.Pool()}, pdx), good, 401},
		{"a peer site", httpClient(b.source(t, iad), pdx), good, 403},
		{"not JSON", op, `{`, 400},
		{"no id", op, `{"phase":"Requested","generation":5}`, 400},
		{"no generation", op, `{"id":"x","phase":"Requested"}`, 400},
		{"unreadable set", op, `{"id":"x","phase":"PreservingData","generation":5,"divergentGtid":"nonsense"}`, 400},
		{"unreadable donor set", op, `{"id":"x","phase":"Cloning","donor":"iad","generation":5,"donorGtid":"nonsense"}`, 400},
		{"an unknown donor", op, `{"id":"x","phase":"Cloning","generation":5,"donor":"sfo"}`, 400},
		{"the view behind the caller", op, `{"id":"x","phase":"Requested","generation":6}`, 503},
	}
	for _, c := range cases {
		if got := post(t, c.client, url, c.body); got != c.code {
			t.Errorf("%s: %d, want %d", c.name, got, c.code)
		}
	}
	if _, err := os.Stat(e.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refusal recorded a reclone: %v", err)
	}
	if got := post(t, op, url, good); got != 200 {
		t.Fatalf("the operator's request: %d", got)
	}
}

// TestHandlerWithoutTLS: without a certificate source nobody can prove
// who they are, so everyone is refused.
func TestHandlerWithoutTLS(t *testing.T) {
	e, _, _ := unitExecutor(t, nil)
	h, err := e.Handler(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	if got := post(t, s.Client(), s.URL, `{"id":"x","phase":"Requested","generation":5}`); got != http.StatusForbidden {
		t.Fatalf("%d, want 403", got)
	}
}

// TestCloningFailsAfterItsAttempts: a donor that refuses every stream
// fails Cloning after MaxAttempts; the site's datadir is never moved (the
// fetch comes first), mysqld never stopped.
func TestCloningFailsAfterItsAttempts(t *testing.T) {
	b := newPKI(t)
	src := b.source(t, pdx)
	e, _, m := unitExecutor(t, src)
	e.MaxAttempts = 2
	h, err := e.Handler(nil)
	if err != nil {
		t.Fatal(err)
	}
	url := serveTLS(t, src, h)
	c := &reclone.Client{URL: func(string, string, string) string { return url },
		HTTP: httpClient(b.source(t, pki.OperatorIdentity()), pdx)}
	q := reclone.Request{ID: "pdx:confirm=orders@1", Phase: v1alpha1.RecoveryCloning, Donor: "iad", Generation: 5}
	phases(t, c, e, q, v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData)
	var a reclone.Answer
	deadline := time.Now().Add(20 * time.Second)
	for a.Failed == "" {
		if a, err = c.Do(t.Context(), "shop", "orders", "pdx", q); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not failed: %+v", a)
		}
		e.Wait()
	}
	if _, err := os.Stat(filepath.Join(e.DataDir, "ibdata1")); err != nil || m.stopped {
		t.Fatalf("the datadir or mysqld was touched: %v, stopped %v", err, m.stopped)
	}
	if a.PreservedAt == "" {
		t.Fatal("no preservation folder named")
	}
}

// TestClientOfAnOlderSidecar: a sidecar without the path answers 404:
// ErrUnsupported.
func TestClientOfAnOlderSidecar(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	defer s.Close()
	c := &reclone.Client{URL: func(string, string, string) string { return s.URL }, HTTP: s.Client()}
	_, err := c.Do(t.Context(), "shop", "orders", "pdx", reclone.Request{ID: "x", Phase: v1alpha1.RecoveryRequested, Generation: 1})
	if !errors.Is(err, reclone.ErrUnsupported) {
		t.Fatalf("%v, want ErrUnsupported", err)
	}
}
