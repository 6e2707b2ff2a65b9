package reclone_test

import (
	"context"
	"errors"
	"io"
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
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// Stand-ins for mbstream and mariadb-backup (the db tier runs the real ones).
const (
	fakeMbstream = "#!/bin/sh\ncat > \"$3/stream.bin\"\n"
	fakeBackup   = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --prepare) mode=prepare ;;
    --move-back) mode=move ;;
    --target-dir=*) target=${a#--target-dir=} ;;
    --datadir=*) data=${a#--datadir=} ;;
  esac
done
case "$mode" in
  prepare) printf 'mysql-bin.000002\t100\t0-1-9\n' > "$target/xtrabackup_binlog_info" ;;
  move) mv "$target"/* "$data"/ ;;
esac
`
)

// flakyMysqld fails its starts while broken, as a sidecar killed right
// after the install would leave mysqld stopped.
type flakyMysqld struct {
	mu            sync.Mutex
	stops, starts int
	broken        bool
}

func (f *flakyMysqld) mend() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken = false
}

func (f *flakyMysqld) Stop(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	return nil
}

func (f *flakyMysqld) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	if f.broken {
		return errors.New("killed before mysqld started")
	}
	return nil
}

// seedingDB is a read-only mysqld that records the seeded position.
type seedingDB struct {
	fakeDB
	seeded []string
}

func (s *seedingDB) SeedPosition(_ context.Context, pos string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seeded = append(s.seeded, pos)
	return nil
}

// TestCloningResumesAfterARestart: the first attempt fetches, moves the
// datadir aside and installs, then fails to start mysqld; a new Executor
// on the same folder (a restarted sidecar) goes on from there: the old
// datadir is moved once and kept whole, the install is not repeated (each
// attempt stops mysqld first, which the kubelet may have restarted), and
// the clone is seeded at the backup's position.
func TestCloningResumesAfterARestart(t *testing.T) {
	bin := t.TempDir()
	tool := func(name, body string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mb, bk := tool("mbstream", fakeMbstream), tool("mariadb-backup", fakeBackup)
	fetches := 0
	donor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches++
		w.Header().Set("Trailer", clone.TrailerResult)
		_, _ = io.WriteString(w, "the backup")
		w.Header().Set(clone.TrailerResult, "ok")
	}))
	defer donor.Close()
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
	db, m := &seedingDB{}, &flakyMysqld{broken: true}
	build := func() (*reclone.Client, *reclone.Executor) {
		e := &reclone.Executor{Namespace: "shop", Group: "orders", Site: "pdx", Dir: filepath.Join(root, "state"),
			DataDir: data, PreserveRoot: filepath.Join(root, "preserved"), DB: db, Mysqld: m, Donors: []string{"iad"},
			TLS: src, Logger: quiet(), StartTimeout: time.Second, View: func() (string, int64, bool) { return "iad", 5, true },
			Receiver: func(string) (*clone.Receiver, error) {
				return &clone.Receiver{URL: donor.URL, Client: donor.Client(), Backup: bk, Mbstream: mb, Logger: quiet()}, nil
			}}
		h, err := e.Handler(prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Wait)
		url := serveTLS(t, src, h)
		return &reclone.Client{URL: func(string, string, string) string { return url },
			HTTP: httpClient(b.source(t, pki.OperatorIdentity()), pdx)}, e
	}
	q := reclone.Request{ID: "pdx:0-3:1@1", Phase: v1alpha1.RecoveryCloning, Donor: "iad", DivergentGtid: "0-3:1", Generation: 5}
	// ask asks until stop holds of an answer.
	ask := func(c *reclone.Client, stop func(reclone.Answer) bool) reclone.Answer {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			a, err := c.Do(t.Context(), "shop", "orders", "pdx", q)
			if err != nil {
				t.Fatal(err)
			}
			if stop(a) {
				return a
			}
			if time.Now().After(deadline) {
				t.Fatalf("no outcome: %+v", a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first, e := build()
	phases(t, first, e, q, v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData)
	if a := ask(first, func(a reclone.Answer) bool { return a.Done || a.Failed != "" || a.Message != "" }); a.Done || a.Message == "" {
		t.Fatalf("first attempt: %+v, want a retried error", a)
	}
	// The answer that showed the error may have started a second attempt,
	// which fails the same way; the sidecar is restarted once it ended.
	e.Wait()
	m.mend()
	second, _ := build()
	// Its first answers still carry the earlier attempts' error while the
	// resumed work runs: only an outcome ends the wait.
	a := ask(second, func(a reclone.Answer) bool { return a.Done || a.Failed != "" })
	if !a.Done || a.Position != "0-1-9" {
		t.Fatalf("after the restart: %+v", a)
	}
	if old, err := os.ReadFile(filepath.Join(a.PreservedAt, "datadir", "app", "errant.frm")); err != nil || string(old) != "old" {
		t.Fatalf("the old datadir is not kept whole: %q, %v", old, err)
	}
	if _, err := os.Stat(filepath.Join(data, "stream.bin")); err != nil {
		t.Fatalf("the clone is not installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.PreservedAt, "datadir.1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the datadir was moved aside again: %v", err)
	}
	if fetches != 1 || len(db.seeded) != 1 || db.seeded[0] != "0-1-9" {
		t.Fatalf("fetches %d, seeded %v; want 1, [0-1-9]", fetches, db.seeded)
	}
}
