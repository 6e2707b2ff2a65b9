package sidecar

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// scriptedPIDs is a process probe whose pid reads follow a script: each
// LivePID takes the next value, and the last one repeats.
type scriptedPIDs struct {
	mu   sync.Mutex
	pids []int
	last int
}

func (s *scriptedPIDs) LivePID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pids) > 0 {
		s.last, s.pids = s.pids[0], s.pids[1:]
	}
	return s.last
}
func (s *scriptedPIDs) script(p ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pids = p
}
func (*scriptedPIDs) HasPID() bool                     { return true }
func (*scriptedPIDs) HasTCP() bool                     { return true }
func (*scriptedPIDs) DialTCP(context.Context) TCPState { return TCPOpen }
func (s *scriptedPIDs) Kill() (int, error)             { return s.LivePID(), nil }

// writableRunner is a Runner for site pdx (lease 1 s, interval 200 ms)
// whose lease started at leaseStart, asking an operator that never
// answers, that has read mysqld pid 100 writable twice.
func writableRunner(t *testing.T, probe ProcessProbe, db *restartingDB, leaseStart time.Time) *Runner {
	t.Helper()
	const interval, lease = 200 * time.Millisecond, time.Second
	srv := httptest.NewServer(&hangingOperator{})
	t.Cleanup(srv.Close)
	r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "pdx",
		LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL,
		ProcessProbe: probe, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, leaseStart)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.noteRead(DBWritable, 100, false)
	r.noteRead(DBWritable, 100, false)
	r.mu.Unlock()
	return r
}

// TestFirstFailureWithUnreadPIDStillEscalates: with the default
// FenceTimeout (5 s) far above Escalation.After (two fifths of the
// interval), a fence's whole budget is one attempt, and noteFailure's first
// call is the only pid read that names the process the fences failed on.
// If that one read fails (the case e541fb7 fixed in notePID), failPID is 0;
// sameTarget then finds the running mysqld (pid 100, the same process,
// seen writable) is not the target and mayStillWrite spares it. The stop
// comes only after the next tick starts a new run: about one
// peerCheckInterval after the operator's deadline, while pid 100 writes.
func TestFirstFailureWithUnreadPIDStillEscalates(t *testing.T) {
	db := &restartingDB{cur: proc{pid: 100, writable: true, stuck: true}}
	probe := &scriptedPIDs{last: 100}
	r := writableRunner(t, probe, db, time.Now())
	// The fence's one attempt fails; the pid read right after fails once.
	probe.script(0, 100)
	now := time.Now()
	r.noteFailure(now, now)
	if !r.mayStillWrite(context.Background()) {
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("pid 100, seen writable, whose fence failed, is spared (failPID %d): nothing stops it",
			r.esc.failPID)
	}
}

// TestLeaseFenceEscalationWithUnreadPID drives the same case through
// fenceEscalating: the lease ran out long ago, mysqld (pid 100) was seen
// writable and its fence hangs; the one pid read after the failed attempt
// fails. Nothing is stopped, and no stop is even reported as failed.
func TestLeaseFenceEscalationWithUnreadPID(t *testing.T) {
	db := &restartingDB{cur: proc{pid: 100, writable: true, stuck: true}}
	probe := &scriptedPIDs{last: 100}
	r := writableRunner(t, probe, db, time.Now().Add(-time.Minute))
	probe.script(0, 100)
	ferr := r.fenceEscalating(context.Background(), ReasonLease)
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.shutdowns)+len(db.kills) == 0 {
		t.Fatalf("lease long over, pid 100 writable with a hung fence, and nothing was stopped "+
			"(fence error %v, stop report %+v)", ferr, r.Status().MySQLDStop)
	}
}

// TestWritableWithUnreadablePIDIsNotSilentlySpared: 6053059 made an
// escalation that cannot stop a serving mysqld report StopFailed, but only
// for a mysqld never seen writable. One last seen writable (as pid 100)
// whose pid can no longer be read is spared by mayStillWrite (the live pid,
// 0, is not 100): no SHUTDOWN is tried and no stop is reported, although
// the lease is long over and its port serves.
func TestWritableWithUnreadablePIDIsNotSilentlySpared(t *testing.T) {
	db := &restartingDB{cur: proc{pid: 100, writable: true}}
	r := writableRunner(t, db, db, time.Now().Add(-time.Minute))
	db.set(proc{pid: 100, writable: true, hung: true, noPID: true})
	_ = r.fenceEscalating(context.Background(), ReasonLease)
	if rep := r.Status().MySQLDStop; rep == nil {
		t.Fatal("a mysqld last seen writable, lease over, port serving, fence hung: no stop tried or reported")
	}
}
