package sidecar

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// pausedDB is a writable mysqld that records the order of what the sidecar
// does to it. Once frozen, every status read hangs until its context ends,
// as a mysqld still thawing (or a slow link to it) would.
type pausedDB struct {
	mu       sync.Mutex
	writable bool
	frozen   bool
	events   []string
}

func (p *pausedDB) Status(ctx context.Context) (mysql.Status, error) {
	p.mu.Lock()
	p.events = append(p.events, "status")
	frozen, writable := p.frozen, p.writable
	p.mu.Unlock()
	if frozen {
		<-ctx.Done()
		return mysql.Status{}, ctx.Err()
	}
	return mysql.Status{ReadOnly: !writable}, nil
}

func (p *pausedDB) Fence(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, "fence")
	p.writable = false
	return nil
}

func (p *pausedDB) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen, p.events = true, nil
}

func (p *pausedDB) first() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.events) == 0 {
		return "", 0
	}
	return p.events[0], len(p.events)
}

// hangingOperator names iad until it is frozen; then it answers nothing
// until the request gives up.
type hangingOperator struct {
	mu     sync.Mutex
	frozen bool
}

func (o *hangingOperator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	frozen := o.frozen
	o.mu.Unlock()
	if frozen {
		<-r.Context().Done()
		return
	}
	_ = json.NewEncoder(w).Encode(Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad",
		Generation: 4, ObservedAt: time.Now()}))
}

// TestWakeAfterPauseFencesFirst is path 5 of issue 13: a whole site was
// frozen past its lease. On thaw, whatever wakes the sidecar first (the
// periodic or refresh tick, or the lease timer) must fence a mysqld last
// seen writable before it reads mysqld or gathers views, because both can
// take seconds and pooled clients keep writing meanwhile.
//
// The mysqld last seen read-only counts too (seed 9569): the operator made
// it writable right after the sidecar's last read, having heard the
// sidecar, and the whole site froze before the next read.
func TestWakeAfterPauseFencesFirst(t *testing.T) {
	type wake struct {
		name string
		wake func(r *Runner, ctx context.Context)
	}
	var cases []wake
	for _, seen := range []string{"seen writable", "seen read-only, then unfenced by the operator"} {
		cases = append(cases, wake{seen + "/tick (periodic or refresh)", func(r *Runner, ctx context.Context) { r.Tick(ctx) }},
			wake{seen + "/lease timer", func(r *Runner, ctx context.Context) { r.check(ctx) }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seenReadOnly := strings.HasPrefix(tc.name, "seen read-only")
			db := &pausedDB{writable: !seenReadOnly}
			op := &hangingOperator{}
			srv := httptest.NewServer(op)
			defer srv.Close()
			r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
				LeaseTimeout: 300 * time.Millisecond, PeerCheckInterval: 100 * time.Millisecond, Keys: TestKeys},
				OperatorURL: srv.URL, StatusTimeout: 500 * time.Millisecond, FenceTimeout: 500 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			r.Tick(ctx) // hears the operator: lease renewed, mysqld read
			if ev, n := db.first(); ev != "status" || n != 1 || db.writable == seenReadOnly {
				t.Fatalf("first tick: events start %q (%d), writable %v", ev, n, db.writable)
			}
			if seenReadOnly {
				db.mu.Lock()
				db.writable = true // the operator's promotion, after the sidecar's read
				db.mu.Unlock()
			}
			// The pause: nothing runs while the lease runs out. On thaw,
			// mysqld and the operator are slow to answer.
			time.Sleep(400 * time.Millisecond)
			db.freeze()
			op.mu.Lock()
			op.frozen = true
			op.mu.Unlock()
			done := make(chan struct{})
			woke := time.Now()
			go func() { defer close(done); tc.wake(r, ctx) }()
			var fencedAfter time.Duration
			for {
				if ev, _ := db.first(); ev != "" {
					if ev != "fence" {
						t.Fatalf("first act after the pause was %q, want fence", ev)
					}
					fencedAfter = time.Since(woke)
					break
				}
				time.Sleep(time.Millisecond)
			}
			if fencedAfter > 100*time.Millisecond {
				t.Fatalf("fenced %s after waking, want at once", fencedAfter)
			}
			<-done
		})
	}
}

// TestLeaseRunsOutDuringAGather: the lease deadline falls while a tick waits
// on a hung operator. The fence must start at the deadline, not when the
// gather gives up, or the escalation's budget would end after the
// operator's lease deadline.
func TestLeaseRunsOutDuringAGather(t *testing.T) {
	const interval, lease, request = time.Second, 3 * time.Second, 900 * time.Millisecond
	db := &pausedDB{writable: true}
	op := &hangingOperator{}
	srv := httptest.NewServer(op)
	defer srv.Close()
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL, RequestTimeout: request,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Tick(ctx) // renews the lease
	deadline := r.leaseDeadline()
	op.mu.Lock()
	op.frozen = true
	op.mu.Unlock()
	time.Sleep(time.Until(deadline.Add(-request / 2)))
	db.mu.Lock()
	db.events = nil
	db.mu.Unlock()
	r.Tick(ctx) // its gather hangs past the deadline
	f := r.Status().LastFence
	if f == nil || f.Reason != ReasonLease {
		t.Fatalf("last fence %+v, want a lease fence", f)
	}
	if late := f.At.Sub(deadline); late > request/3 {
		t.Fatalf("fenced %s after the lease deadline, want at it (the gather ended %s after it)", late, request/2)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	fences := 0
	for _, e := range db.events {
		if e == "fence" {
			fences++
		}
	}
	if fences != 1 {
		t.Fatalf("%d fences in the tick, want 1: %v", fences, db.events)
	}
}
