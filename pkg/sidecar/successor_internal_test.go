package sidecar

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// proc is one state of a restarting mysqld, as the sidecar can see it.
type proc struct {
	pid int
	// refused: SQL and TCP connections are refused (shutting down, or
	// booting before the listener opens); hung: TCP accepts, SQL hangs
	// (booting after the listener opened, or a frozen process).
	refused, hung bool
	writable      bool
	// stuck: a fence never completes (a long rollback holds its locks).
	stuck bool
	// pidUnread: the process runs, but the first read of its pid in this
	// state fails (the pid file or /proc could not be read once).
	pidUnread bool
	// noPID: the process runs, but no pid can ever be read for it (its pid
	// file is missing or names no mysqld), so it cannot be signalled.
	noPID bool
}

// restartingDB is a mysqld that the kubelet restarts while the sidecar
// runs: a script of states, each with its own pid. It is also the
// sidecar's process probe.
type restartingDB struct {
	mu        sync.Mutex
	cur       proc
	pidRead   bool  // the pid was read in the current state
	shutdowns []int // pids asked to shut down
	kills     []int
}

func (d *restartingDB) set(p proc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cur, d.pidRead = p, false
}

func (d *restartingDB) get() proc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur
}

func (d *restartingDB) Status(ctx context.Context) (mysql.Status, error) {
	p := d.get()
	switch {
	case p.pid == 0 || p.refused:
		return mysql.Status{}, fmt.Errorf("status: %w", syscall.ECONNREFUSED)
	case p.hung:
		<-ctx.Done()
		return mysql.Status{}, fmt.Errorf("status: %w", ctx.Err())
	}
	return mysql.Status{ReadOnly: !p.writable}, nil
}

func (d *restartingDB) Fence(ctx context.Context) error {
	p := d.get()
	switch {
	case p.pid == 0 || p.refused:
		return fmt.Errorf("fence: %w", syscall.ECONNREFUSED)
	case p.hung || p.stuck:
		<-ctx.Done()
		return fmt.Errorf("fence: %w", ctx.Err())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur.pid == p.pid {
		d.cur.writable = false
	}
	return nil
}

func (d *restartingDB) Shutdown(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur.pid == 0 || d.cur.refused || d.cur.hung {
		return fmt.Errorf("shutdown: %w", syscall.ECONNREFUSED)
	}
	d.shutdowns = append(d.shutdowns, d.cur.pid)
	d.cur = proc{}
	return nil
}

func (*restartingDB) HasPID() bool { return true }
func (*restartingDB) HasTCP() bool { return true }
func (d *restartingDB) LivePID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur.noPID || d.cur.pidUnread && !d.pidRead {
		d.pidRead = true
		return 0
	}
	return d.cur.pid
}

func (d *restartingDB) DialTCP(context.Context) TCPState {
	if p := d.get(); p.pid == 0 || p.refused {
		return TCPRefused
	}
	return TCPOpen
}

func (d *restartingDB) Kill() (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pid := d.cur.pid
	if pid == 0 || d.cur.noPID {
		return 0, ErrNoProcess
	}
	d.kills = append(d.kills, pid)
	d.cur = proc{}
	return pid, nil
}

// TestEscalationSparesTheSuccessor: a fence that failed on one mysqld
// process, or one that failed while no mysqld ran, is never carried over to
// the process the kubelet starts next. That one boots read_only from
// my.cnf: while it starts (its port open, SQL not answering yet) it is left
// alone and fenced once it answers. A successor seen writable is fenced
// afresh, and stopped within the budget when that fence cannot complete.
// The site, pdx, is not the active one, so its mysqld must be fenced
// whenever it may write.
func TestEscalationSparesTheSuccessor(t *testing.T) {
	const interval, lease = 200 * time.Millisecond, time.Second
	a := proc{pid: 100}
	shuttingDown := proc{pid: 100, refused: true}
	booting := proc{pid: 200, refused: true}
	starting := proc{pid: 200, hung: true}
	for _, tc := range []struct {
		name string
		// steps are the states mysqld goes through, each held for the time given.
		steps []phase
		// last is the state mysqld ends in, held for a second.
		last      proc
		wantStops []int // pids stopped, by SHUTDOWN or SIGKILL
		wantRO    bool  // mysqld ends read-only and running
	}{
		{name: "a successor starting slowly after a failed fence is left alone",
			steps: []phase{{a, 3}, {shuttingDown, 3}, {proc{}, 2}, {booting, 2}, {starting, 5}},
			last:  proc{pid: 200}, wantRO: true},
		{name: "a successor that starts writable is fenced",
			steps: []phase{{a, 3}, {shuttingDown, 3}, {proc{}, 2}, {booting, 2}, {starting, 5}},
			last:  proc{pid: 200, writable: true}, wantRO: true},
		{name: "a successor writable with a stuck fence is stopped",
			steps: []phase{{a, 3}, {shuttingDown, 3}, {proc{}, 2}, {booting, 2}, {starting, 5}},
			last:  proc{pid: 200, writable: true, stuck: true}, wantStops: []int{200}},
		{name: "a pid read that fails once does not pass the process for its successor",
			steps: []phase{{a, 3}},
			last:  proc{pid: 100, hung: true, pidUnread: true}, wantStops: []int{100}},
		{name: "the process whose fence failed is stopped while its port serves",
			steps: []phase{{a, 3}},
			last:  proc{pid: 100, hung: true}, wantStops: []int{100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &restartingDB{cur: tc.steps[0].p}
			srv := httptest.NewServer(&hangingOperator{})
			defer srv.Close()
			r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "pdx",
				LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL,
				ProcessProbe: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(ctx) }()
			for _, s := range tc.steps {
				db.set(s.p)
				time.Sleep(time.Duration(s.ticks) * interval)
			}
			db.set(tc.last)
			time.Sleep(5 * interval)
			cancel()
			<-done
			db.mu.Lock()
			defer db.mu.Unlock()
			stops := append(append([]int(nil), db.shutdowns...), db.kills...)
			if fmt.Sprint(stops) != fmt.Sprint(tc.wantStops) && !(len(stops) == 0 && len(tc.wantStops) == 0) {
				t.Fatalf("stopped pids %v, want %v (status %+v)", stops, tc.wantStops, r.Status().MySQLDStop)
			}
			if tc.wantRO && (db.cur.pid != tc.last.pid || db.cur.writable) {
				t.Fatalf("mysqld ends as %+v, want pid %d running read-only", db.cur, tc.last.pid)
			}
		})
	}
}

// phase is one state of mysqld held for ticks intervals.
type phase struct {
	p     proc
	ticks int
}

// TestEscalationDoesNotReportAStopItDidNotMake: a mysqld whose fence hangs
// while its port serves, and whose pid cannot be read, cannot be killed.
// The escalation says it failed rather than that it stopped mysqld (which
// would also end its run of failed fences and start the budget again).
func TestEscalationDoesNotReportAStopItDidNotMake(t *testing.T) {
	const interval, lease = 200 * time.Millisecond, time.Second
	db := &restartingDB{cur: proc{pid: 100}}
	srv := httptest.NewServer(&hangingOperator{})
	defer srv.Close()
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "pdx",
		LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL,
		ProcessProbe: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	time.Sleep(3 * interval)
	db.set(proc{pid: 100, hung: true, noPID: true})
	time.Sleep(8 * interval)
	cancel()
	<-done
	rep := r.Status().MySQLDStop
	if rep == nil {
		t.Fatal("no stop was tried: the fence of a serving mysqld must escalate")
	}
	if rep.How != StopFailed {
		t.Fatalf("stop reported %q, want %q: nothing could be stopped (%+v)", rep.How, StopFailed, rep)
	}
}
