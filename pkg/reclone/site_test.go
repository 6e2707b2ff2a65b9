package reclone_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// countingMysqld counts its stops and starts.
type countingMysqld struct {
	mu            sync.Mutex
	stops, starts int
}

func (f *countingMysqld) Stop(_ context.Context) error {
	f.mu.Lock()
	f.stops++
	f.mu.Unlock()
	return nil
}
func (f *countingMysqld) Start(_ context.Context) error {
	f.mu.Lock()
	f.starts++
	f.mu.Unlock()
	return nil
}

// siteBed is a site whose datadir holds app/errant.frm, with fake
// mbstream/mariadb-backup and a donor that counts its streams.
func siteBed(t *testing.T, opts ...func(e *reclone.Executor)) (*reclone.Client, *countingMysqld, *int, string, *reclone.Executor) {
	t.Helper()
	bin := t.TempDir()
	tool := func(name, body string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mb, bk := tool("mbstream", fakeMbstream), tool("mariadb-backup", fakeBackup)
	fetches := new(int)
	donor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		*fetches++
		w.Header().Set("Trailer", clone.TrailerResult)
		_, _ = io.WriteString(w, "the backup")
		w.Header().Set(clone.TrailerResult, "ok")
	}))
	t.Cleanup(donor.Close)
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(filepath.Join(data, "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "app", "errant.frm"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newPKI(t)
	src := b.source(t, pdx)
	m := &countingMysqld{}
	clock := time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC)
	var cmu sync.Mutex
	e := &reclone.Executor{Namespace: "shop", Group: "orders", Site: "pdx", Dir: filepath.Join(root, "state"),
		DataDir: data, PreserveRoot: filepath.Join(root, "preserved"), DB: &seedingDB{}, Mysqld: m, Donors: []string{"iad"},
		TLS: src, Logger: quiet(), StartTimeout: time.Second, View: func() (string, int64, bool) { return "iad", 5, true },
		Now: func() time.Time { cmu.Lock(); defer cmu.Unlock(); clock = clock.Add(time.Minute); return clock },
		Receiver: func(string) (*clone.Receiver, error) {
			return &clone.Receiver{URL: donor.URL, Client: donor.Client(), Backup: bk, Mbstream: mb, Logger: quiet()}, nil
		}}
	for _, o := range opts {
		o(e)
	}
	h, err := e.Handler(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Wait)
	url := serveTLS(t, src, h)
	c := &reclone.Client{URL: func(string, string, string) string { return url },
		HTTP: httpClient(b.source(t, pki.OperatorIdentity()), pdx)}
	return c, m, fetches, data, e
}
