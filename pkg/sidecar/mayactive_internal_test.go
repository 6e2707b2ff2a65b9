package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestRestartedSidecarFencesBeforeReading covers simulation seeds 19134,
// 30972, 45025 and 300264: a sidecar restarted while its site is frozen
// wakes with mysqld unread. When its predecessor adopted a view naming this
// site (so the operator may have made mysqld writable), the new process
// must fence before its first read, which can take StatusTimeout while
// clients write. A sidecar whose predecessor last held a view naming
// another site and saw mysqld read-only reads first: a replica's sessions
// are spared.
func TestRestartedSidecarFencesBeforeReading(t *testing.T) {
	cases := []struct {
		name      string
		active    string // the site the operator names before the restart; "" for a new Pod
		wantFirst string
	}{
		{"predecessor held a view naming this site", "iad", "fence"},
		{"predecessor held a view naming another site", "fra", "status"},
		{"new Pod: no record", "", "status"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := &pausedDB{writable: tc.active == "iad"}
			cfg := func(url string) Config {
				return Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
					LeaseTimeout: 300 * time.Millisecond, PeerCheckInterval: 100 * time.Millisecond, Keys: TestKeys},
					OperatorURL: url, StatusTimeout: 300 * time.Millisecond, FenceTimeout: 300 * time.Millisecond,
					StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			}
			if tc.active != "" {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					_ = json.NewEncoder(w).Encode(Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders",
						ActiveSite: tc.active, Generation: 4, ObservedAt: time.Now()}))
				}))
				r, err := NewRunner(cfg(srv.URL), db, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				r.Tick(context.Background()) // adopts the view, reads mysqld
				r.Tick(context.Background())
				srv.Close()
				if got := r.MayBeActive(); got != (tc.active == "iad") {
					t.Fatalf("record after the view naming %s: %v", tc.active, got)
				}
			}
			// The restart: the site is frozen, so mysqld answers nothing.
			db.mu.Lock()
			db.writable = true // whatever it was, the worst case: clients can write
			db.mu.Unlock()
			db.freeze()
			op := &hangingOperator{frozen: true}
			srv := httptest.NewServer(op)
			defer srv.Close()
			r, err := NewRunner(cfg(srv.URL), db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); r.Start(context.Background()) }()
			for {
				if ev, _ := db.first(); ev != "" {
					if ev != tc.wantFirst {
						t.Fatalf("the restarted process's first act was %q, want %q", ev, tc.wantFirst)
					}
					break
				}
				time.Sleep(time.Millisecond)
			}
			<-done
		})
	}
}

// TestActiveRecordUnreadableFencesFirst: a record that cannot be parsed
// counts as set.
func TestActiveRecordUnreadableFencesFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ActiveFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readActive(dir)
	if !got || err == nil {
		t.Fatalf("readActive of a malformed record = %v, %v; want true and an error", got, err)
	}
	if got, err := readActive(t.TempDir()); got || err != nil {
		t.Fatalf("readActive with no record = %v, %v; want false, nil", got, err)
	}
}

// thawingDB hangs every call while frozen, as a SIGSTOPped mysqld does, and
// thaws during its second status read, writable.
type thawingDB struct {
	mu       sync.Mutex
	frozen   bool
	writable bool
	thawed   chan struct{}
	reads    int
}

func (d *thawingDB) wait(ctx context.Context) error {
	d.mu.Lock()
	frozen := d.frozen
	d.mu.Unlock()
	if !frozen {
		return nil
	}
	select {
	case <-d.thawed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *thawingDB) Status(ctx context.Context) (mysql.Status, error) {
	d.mu.Lock()
	d.reads++
	if d.frozen && d.reads == 2 {
		d.frozen = false
		close(d.thawed)
	}
	d.mu.Unlock()
	if err := d.wait(ctx); err != nil {
		return mysql.Status{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return mysql.Status{ReadOnly: !d.writable}, nil
}

func (d *thawingDB) Fence(ctx context.Context) error {
	if err := d.wait(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writable = false
	return nil
}

func (d *thawingDB) isWritable() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writable
}

// TestBootFenceFailedThenThawedFencesBeforeGathering (review of the active
// record): the boot fence of a frozen mysqld fails; mysqld thaws during the
// next tick's read, writable. The tick must fence before it asks the
// operator anything, since a hung operator holds the gather for
// RequestTimeout while clients write.
func TestBootFenceFailedThenThawedFencesBeforeGathering(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ActiveFile), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := &thawingDB{frozen: true, writable: true, thawed: make(chan struct{})}
	var asked, askedWritable atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if db.isWritable() {
			askedWritable.Add(1)
		}
		<-r.Context().Done() // a hung operator
	}))
	defer srv.Close()
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 3 * time.Second, PeerCheckInterval: time.Second, Keys: TestKeys},
		OperatorURL: srv.URL, StatusTimeout: 200 * time.Millisecond, FenceTimeout: 200 * time.Millisecond,
		StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Start(ctx) // fence first (fails: frozen), read 1 (times out)
	r.Tick(ctx)  // read 2 thaws mysqld writable; then the gather
	if asked.Load() == 0 {
		t.Fatal("the tick never asked the operator")
	}
	if n := askedWritable.Load(); n > 0 {
		t.Fatalf("the tick asked the operator %d times while mysqld was writable", n)
	}
	if db.isWritable() {
		t.Fatal("mysqld is still writable after the tick")
	}
}

// TestActiveRecordKeptInStep: the record follows views and reads, and a
// failed write is tried again.
func TestActiveRecordKeptInStep(t *testing.T) {
	serve := func(active string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_ = json.NewEncoder(w).Encode(Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders",
				ActiveSite: active, Generation: 4, ObservedAt: time.Now()}))
		}))
	}
	onDisk := func(t *testing.T, dir string) bool {
		t.Helper()
		got, err := readActive(dir)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	newRunner := func(t *testing.T, dir, url string, db MySQL) *Runner {
		t.Helper()
		r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
			LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: TestKeys},
			OperatorURL: url, StatusTimeout: 100 * time.Millisecond, FenceTimeout: 100 * time.Millisecond,
			StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("a failed write is tried again", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		srv := serve("iad")
		defer srv.Close()
		r := newRunner(t, dir, srv.URL, &pausedDB{writable: true}) // dir missing: writes fail
		r.Tick(context.Background())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r.Tick(context.Background())
		if !onDisk(t, dir) {
			t.Fatal("the record is not on disk after the directory came back")
		}
	})
	t.Run("no view naming this site is adopted while the record cannot be written", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run") // missing: every write fails, as on EIO or ENOSPC
		srv := serve("iad")
		defer srv.Close()
		r := newRunner(t, dir, srv.URL, &pausedDB{writable: false})
		r.Tick(context.Background())
		r.mu.Lock()
		v, relayed := r.loop.Relay()
		echo := r.loop.OperatorEcho()
		held, _ := r.loop.View()
		r.mu.Unlock()
		if (relayed && v.ActiveSite == "iad") || echo.Operator != "" || held.ActiveSite == "iad" {
			t.Fatalf("adopted a view naming this site with the record unwritten: relay %v %+v, echo %+v", relayed, v, echo)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r.Tick(context.Background())
		r.mu.Lock()
		held, _ = r.loop.View()
		r.mu.Unlock()
		if held.ActiveSite != "iad" || !onDisk(t, dir) {
			t.Fatalf("once the record could be written: view %+v, on disk %v", held, onDisk(t, dir))
		}
	})
	t.Run("a writable read sets it under a view naming another site", func(t *testing.T) {
		dir := t.TempDir()
		srv := serve("fra")
		defer srv.Close()
		db := &pausedDB{writable: false}
		r := newRunner(t, dir, srv.URL, db)
		r.Tick(context.Background())
		if onDisk(t, dir) {
			t.Fatal("set for a read-only replica")
		}
		db.mu.Lock()
		db.writable = true // the operator's promotion, before the sidecar heard of it
		db.mu.Unlock()
		r.db = unfenceable{db} // so the view rule's fence does not clear it at once
		r.Tick(context.Background())
		if !onDisk(t, dir) {
			t.Fatal("a writable read did not set the record")
		}
		r.db = db
		r.Tick(context.Background())
		if onDisk(t, dir) {
			t.Fatal("still set after a fence under a view naming another site")
		}
	})
	t.Run("a floor without a record counts as set", func(t *testing.T) {
		dir := t.TempDir()
		if err := writeFloor(dir, 3); err != nil {
			t.Fatal(err)
		}
		if !onDisk(t, dir) {
			t.Fatal("a predecessor that kept no record was taken for a replica")
		}
	})
}

// unfenceable is a mysqld whose fences fail.
type unfenceable struct{ *pausedDB }

func (unfenceable) Fence(context.Context) error { return errors.New("fence refused") }
