package sidecar

import (
	"context"
	"errors"
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

// stuckDB is a mysqld whose fence never completes (a rolling-back statement
// holds the locks read_only needs) until it is shut down.
type stuckDB struct {
	mu        sync.Mutex
	writable  bool
	stopped   bool
	fences    int
	shutdowns []time.Time
	// ignoreShutdown leaves the process running after SHUTDOWN.
	ignoreShutdown bool
}

func (s *stuckDB) Status(context.Context) (mysql.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return mysql.Status{}, fmt.Errorf("status: %w", syscall.ECONNREFUSED)
	}
	return mysql.Status{ReadOnly: !s.writable}, nil
}

func (s *stuckDB) Fence(ctx context.Context) error {
	s.mu.Lock()
	s.fences++
	s.mu.Unlock()
	<-ctx.Done() // SET GLOBAL read_only waits on the statement's locks
	return fmt.Errorf("fence: %w", ctx.Err())
}

func (s *stuckDB) Shutdown(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdowns = append(s.shutdowns, time.Now())
	if !s.ignoreShutdown {
		s.stopped = true
	}
	return nil
}

// TestFenceEscalation is path 4 of issue 13 at the unit tier: a fence that
// cannot complete stops mysqld within its budget, which ends before the
// operator's lease deadline (the sidecar's lease deadline plus one
// interval); only when mysqld may still write, and not for a boot fence
// while the lease still runs.
func TestFenceEscalation(t *testing.T) {
	const interval, lease = 500 * time.Millisecond, 1500 * time.Millisecond
	for _, tc := range []struct {
		name     string
		writable bool
		// hearOperator: the operator answered once, lifting the boot net.
		hearOperator bool
		// isolate: the operator stops answering, so the lease runs out.
		isolate  bool
		wantStop bool
		wantHow  string
	}{
		{name: "lease fence on a writable mysqld stops it", writable: true, hearOperator: true, isolate: true, wantStop: true, wantHow: StopShutdown},
		{name: "boot fence with the lease running only retries", writable: true, wantStop: false},
		{name: "a mysqld never seen writable is left alone", writable: false, hearOperator: true, isolate: true, wantStop: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &stuckDB{writable: tc.writable}
			op := &hangingOperator{}
			srv := httptest.NewServer(op)
			defer srv.Close()
			r, err := NewRunner(Config{Settings: Settings{Namespace: "shop", Group: "orders", Site: "iad",
				LeaseTimeout: lease, PeerCheckInterval: interval, Keys: TestKeys}, OperatorURL: srv.URL,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.hearOperator {
				r.Tick(ctx)
			}
			if tc.isolate {
				op.mu.Lock()
				op.frozen = true
				op.mu.Unlock()
			}
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(ctx) }()
			time.Sleep(lease + 2*interval)
			cancel()
			<-done
			st := r.Status()
			db.mu.Lock()
			defer db.mu.Unlock()
			if got := st.MySQLDStop != nil; got != tc.wantStop {
				t.Fatalf("stopped %v, want %v (status %+v, shutdowns %d, fences %d)", got, tc.wantStop, st.MySQLDStop, len(db.shutdowns), db.fences)
			}
			if !tc.wantStop {
				return
			}
			// Once stopped it is not stopped again: with no process evidence
			// configured its later reads are unknown, never seen writable.
			if st.MySQLDStop.How != tc.wantHow || len(db.shutdowns) != 1 {
				t.Fatalf("stop %+v, %d shutdowns", st.MySQLDStop, len(db.shutdowns))
			}
			// The operator's deadline: the last renewal + lease + interval.
			if deadline := st.LastContact.Add(lease + interval); !st.MySQLDStop.At.Before(deadline) {
				t.Fatalf("stopped at %s, after the operator's lease deadline %s", st.MySQLDStop.At, deadline)
			}
			if got := testCounter(t, r, MetricMySQLDStops, tc.wantHow); got != 1 {
				t.Fatalf("%s{how=%s} = %v, want 1", MetricMySQLDStops, tc.wantHow, got)
			}
		})
	}
}

func testCounter(t *testing.T, r *Runner, name, how string) float64 {
	t.Helper()
	mfs, err := r.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == LabelHow && l.GetValue() == how {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal(errors.New("metric not found: " + name))
	return 0
}
