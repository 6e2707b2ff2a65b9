package sidecar

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// lifeDB is a mysqld with application sessions, a process and a port, for
// the termination and the probes. It logs what was done to it, with
// whether it was writable then.
type lifeDB struct {
	mu       sync.Mutex
	writable bool
	sessions int
	// sessionsEnd: each count of sessions ends one (they finish by themselves).
	sessionsEnd bool
	// frozen: every SQL call blocks until its context ends; the port accepts.
	frozen bool
	// recovering: SQL is refused, the process runs, the port refuses.
	recovering bool
	// ignoreShutdown: SHUTDOWN is taken but the process keeps running.
	ignoreShutdown bool
	// unfenceOnCount: the operator makes it writable at this count of sessions.
	unfenceOnCount int
	counts         int
	stopped        bool
	log            []string
}

func (d *lifeDB) note(what string) {
	if d.writable {
		what += " (writable)"
	}
	d.log = append(d.log, what)
}

func (d *lifeDB) block(ctx context.Context) (bool, error) {
	d.mu.Lock()
	frozen, stopped, rec := d.frozen, d.stopped, d.recovering
	d.mu.Unlock()
	switch {
	case stopped || rec:
		return true, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	case frozen:
		<-ctx.Done()
		return true, fmt.Errorf("frozen: %w", ctx.Err())
	}
	return false, nil
}

func (d *lifeDB) Status(ctx context.Context) (mysql.Status, error) {
	if stop, err := d.block(ctx); stop {
		return mysql.Status{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return mysql.Status{ReadOnly: !d.writable}, nil
}

func (d *lifeDB) Fence(ctx context.Context) error {
	if err := d.FenceKeepSessions(ctx); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessions = 0
	return nil
}

func (d *lifeDB) FenceKeepSessions(ctx context.Context) error {
	if stop, err := d.block(ctx); stop {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writable = false
	d.note("fence")
	return nil
}

func (d *lifeDB) AppSessions(ctx context.Context) (int, error) {
	if stop, err := d.block(ctx); stop {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counts++
	if d.counts == d.unfenceOnCount {
		d.writable = true
		d.note("operator unfenced")
	}
	if d.sessionsEnd && d.sessions > 0 {
		d.sessions--
	}
	return d.sessions, nil
}

func (d *lifeDB) KillAppConnections(ctx context.Context) (int, error) {
	if stop, err := d.block(ctx); stop {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.sessions
	d.sessions = 0
	d.note(fmt.Sprintf("kill %d sessions", n))
	return n, nil
}

func (d *lifeDB) Shutdown(ctx context.Context) error {
	if stop, err := d.block(ctx); stop {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("shutdown")
	if !d.ignoreShutdown {
		d.stopped = true
	}
	return nil
}

// ProcessProbe: pid 42 until stopped; the port accepts unless stopped or
// recovering.
func (d *lifeDB) HasPID() bool { return true }
func (d *lifeDB) HasTCP() bool { return true }
func (d *lifeDB) LivePID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return 0
	}
	return 42
}

func (d *lifeDB) DialTCP(context.Context) TCPState {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.recovering {
		return TCPRefused
	}
	return TCPOpen
}

func (d *lifeDB) Kill() (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return 0, ErrNoProcess
	}
	d.note("SIGKILL")
	d.stopped = true
	return 42, nil
}

func (d *lifeDB) events() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

func lifeRunner(t *testing.T, db *lifeDB, cfg Config) *Runner {
	t.Helper()
	cfg.Settings = Settings{Namespace: "shop", Group: "orders", Site: "iad", LeaseTimeout: 3 * time.Second,
		PeerCheckInterval: time.Second, Keys: TestKeys}
	cfg.OperatorURL, cfg.ProcessProbe = "http://127.0.0.1:1", db
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := NewRunner(cfg, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTerminate runs the termination on a fake mysqld with a real clock
// and a 2 s stopDelay (smart phase 1 s, SIGKILL at 1.5 s). In every case
// the fence comes before anything else, mysqld is gone before the
// kubelet's SIGKILL, and it is never left writable once fenced.
func TestTerminate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		db      *lifeDB
		fence   time.Duration // FenceTimeout
		want    []string
		how     string
		within  time.Duration // the run ends by then
		atLeast time.Duration
	}{
		{name: "sessions finish by themselves: no wait for the smart phase, nothing to kill",
			db:   &lifeDB{writable: true, sessions: 2, sessionsEnd: true},
			want: []string{"fence", "kill 0 sessions", "shutdown"}, how: StopShutdown, within: 900 * time.Millisecond},
		{name: "sessions that stay are killed at half of stopDelay",
			db:   &lifeDB{writable: true, sessions: 3},
			want: []string{"fence", "kill 3 sessions", "shutdown"}, how: StopShutdown,
			atLeast: time.Second, within: 1400 * time.Millisecond},
		{name: "promoted meanwhile: fenced again before the shutdown",
			db: &lifeDB{writable: true, sessions: 3, unfenceOnCount: 2},
			want: []string{"fence", "operator unfenced (writable)", "fence", "kill 3 sessions",
				"shutdown"}, how: StopShutdown, within: 1400 * time.Millisecond},
		{name: "SHUTDOWN ignored: SIGKILL at the margin",
			db:   &lifeDB{writable: true, ignoreShutdown: true},
			want: []string{"fence", "kill 0 sessions", "shutdown", "SIGKILL"}, how: StopKill,
			atLeast: 1500 * time.Millisecond, within: 1900 * time.Millisecond},
		{name: "frozen: the fence fails, no drain, SIGKILL",
			db: &lifeDB{writable: true, frozen: true}, fence: 300 * time.Millisecond,
			want: []string{"SIGKILL (writable)"}, how: StopKill, atLeast: 1500 * time.Millisecond, within: 1900 * time.Millisecond},
		{name: "already gone", db: &lifeDB{stopped: true}, how: TermGone, within: 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db
			r := lifeRunner(t, db, Config{StopDelay: 2 * time.Second, FenceTimeout: tc.fence})
			start := time.Now()
			var wg sync.WaitGroup
			reps := make([]TerminationReport, 2)
			for i := range reps { // the SIGTERM and the preStop hook (or a second SIGTERM)
				wg.Add(1)
				go func() { defer wg.Done(); reps[i] = r.Terminate(context.Background()) }()
			}
			wg.Wait()
			took := time.Since(start)
			if got := db.events(); !slices.Equal(got, tc.want) {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
			if reps[0].How != tc.how || reps[1].How != tc.how || !reps[0].Start.Equal(reps[1].Start) {
				t.Fatalf("reports %+v and %+v, want one run ending %s", reps[0], reps[1], tc.how)
			}
			if took < tc.atLeast || took > tc.within {
				t.Fatalf("took %s, want %s to %s", took, tc.atLeast, tc.within)
			}
			if st := r.Status().Termination; st == nil || st.How != tc.how {
				t.Fatalf("/status termination %+v, want one ending %s", st, tc.how)
			}
		})
	}
}

func TestTerminateFailsReadiness(t *testing.T) {
	db := &lifeDB{}
	r := lifeRunner(t, db, Config{StopDelay: time.Second})
	r.readDB(context.Background())
	h := r.HealthHandler()
	if code := getCode(h, PathReadyz); code != http.StatusOK {
		t.Fatalf("/readyz before: %d", code)
	}
	r.Terminate(context.Background())
	if code := getCode(h, PathReadyz); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while terminating: %d, want 503", code)
	}
}

func TestReadinessNeedsAppLogin(t *testing.T) {
	db := &lifeDB{}
	var fail bool
	r := lifeRunner(t, db, Config{AppLogin: func(context.Context) error {
		if fail {
			return fmt.Errorf("access denied")
		}
		return nil
	}})
	r.readDB(context.Background())
	if code := getCode(r.Handler(), PathReadyz); code != http.StatusOK {
		t.Fatalf("/readyz with a working login: %d", code)
	}
	fail = true
	if code := getCode(r.Handler(), PathReadyz); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with a refused login: %d, want 503", code)
	}
}

// TestLiveHandler: GET /healthz/live on a fake mysqld that answers, is
// frozen (the port accepts, SQL never answers), or recovers (the process
// runs, the port refuses) within and past startDelay on the Runner's clock.
func TestLiveHandler(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	db := &lifeDB{}
	r := lifeRunner(t, db, Config{Clock: clk, StartDelay: 30 * time.Second, LiveTimeout: 100 * time.Millisecond})
	h := r.HealthHandler()
	set := func(f func(*lifeDB)) { db.mu.Lock(); f(db); db.mu.Unlock() }
	steps := []struct {
		name string
		set  func(*lifeDB)
		step time.Duration
		want int
	}{
		{"answers", func(*lifeDB) {}, 0, http.StatusOK},
		{"crash recovery begins", func(d *lifeDB) { d.recovering = true }, 0, http.StatusOK},
		{"still recovering 29s later", func(*lifeDB) {}, 29 * time.Second, http.StatusOK},
		{"recovering past startDelay", func(*lifeDB) {}, 2 * time.Second, http.StatusServiceUnavailable},
		{"recovered", func(d *lifeDB) { d.recovering = false }, 0, http.StatusOK},
		{"frozen", func(d *lifeDB) { d.frozen = true }, 0, http.StatusServiceUnavailable},
		{"thawed", func(d *lifeDB) { d.frozen = false }, 0, http.StatusOK},
		{"recovering again gets a whole startDelay", func(d *lifeDB) { d.recovering = true }, 0, http.StatusOK},
		{"... 29s on", func(*lifeDB) {}, 29 * time.Second, http.StatusOK},
	}
	for _, s := range steps {
		set(s.set)
		clk.Step(s.step)
		if code := getCode(h, PathLive); code != s.want {
			t.Fatalf("%s: /healthz/live %d, want %d", s.name, code, s.want)
		}
	}
}

func getCode(h http.Handler, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}
