package sidecar

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
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
