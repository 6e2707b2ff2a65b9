//go:build db

package mysql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

func TestFenceBlocksAppAndUnfenceRestores(t *testing.T) {
	s := startSites(t, 2)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")

	// An open transaction and an idle session of the application.
	ctx := ctxFor(t, 30*time.Second)
	tx, err := app.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	for range 2 { // a second fence is a no-op
		if err := s.in[0].Fence(ctx); err != nil {
			t.Fatalf("fence: %v", err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (2)"); err == nil {
		t.Fatal("open transaction survived the fence")
	}
	_ = tx.Rollback()
	if _, err := app.ExecContext(ctx, "INSERT INTO t VALUES (3)"); errno(err) != 1290 {
		t.Fatalf("app write on fenced primary: got %v, want error 1290", err)
	}
	if st := s.status(t, 0); !st.Fenced() || st.Writable() {
		t.Fatalf("status after fence: fenced=%v writable=%v", st.Fenced(), st.Writable())
	}

	for range 2 {
		if err := s.in[0].Unfence(ctx); err != nil {
			t.Fatalf("unfence: %v", err)
		}
	}
	mustExec(t, app, "INSERT INTO t VALUES (4)")
	if st := s.status(t, 0); st.Fenced() || !st.Writable() {
		t.Fatalf("status after unfence: fenced=%v writable=%v", st.Fenced(), st.Writable())
	}
	if n := count(t, app, "SELECT COUNT(*) FROM t"); n != 1 {
		t.Fatalf("rows = %d, want 1 (only id 4)", n)
	}
}

func TestFencedReplicaKeepsApplying(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	if err := s.in[1].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1), (2)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatalf("fenced replica stopped applying: %v", err)
	}
	if n := count(t, s.db(t, 1, true), "SELECT COUNT(*) FROM t"); n != 2 {
		t.Fatalf("replica rows = %d, want 2", n)
	}
	if st := s.status(t, 1); st.Replica == nil || !st.Replica.Healthy() {
		t.Fatalf("replication after fencing the replica: %+v", st.Replica)
	}
}

// A write statement that runs for seconds holds read_only back; the fence
// kills it after lock_wait_timeout and finishes long before the write would.
func TestFenceIsBoundedByARunningWrite(t *testing.T) {
	s := startSites(t, 1)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	done := make(chan error, 1)
	go func() {
		_, err := app.ExecContext(context.Background(), "INSERT INTO t SELECT 1 FROM DUAL WHERE SLEEP(20) = 0")
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // let the write start
	start := time.Now()
	if err := s.in[0].Fence(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatalf("fence: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("fence took %s with a running write", took)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the running write committed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the running write was not killed")
	}
}

func TestKillAppConnectionsIsSelective(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	// Three pinned application sessions on the replica, plus a monitor session.
	app := s.db(t, 1, true)
	for range 3 {
		c, err := app.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mon := s.dbAs(t, 1, s.c.MonitorDSN(1))
	if err := mon.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	// Another session of the operator's account, pinned.
	opConn, err := s.db(t, 1, false).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = opConn.Close() }()
	killed, err := s.in[1].KillAppConnections(ctx)
	if err != nil || killed != 3 {
		t.Fatalf("killed %d, %v; want 3 application sessions", killed, err)
	}
	if again, err := s.in[1].KillAppConnections(ctx); err != nil || again != 0 {
		t.Fatalf("second kill: %d, %v; want 0", again, err)
	}
	// The monitor, the caller and replication survive, on both sides.
	if _, err := mon.ExecContext(ctx, "DO 1"); err != nil {
		t.Fatalf("monitor session was killed: %v", err)
	}
	if _, err := opConn.ExecContext(ctx, "DO 1"); err != nil {
		t.Fatalf("operator session was killed: %v", err)
	}
	if _, err := s.in[1].Status(ctx); err != nil {
		t.Fatalf("the caller's own pool after the kill: %v", err)
	}
	if killed, err := s.in[0].KillAppConnections(ctx); err != nil {
		t.Fatalf("kill on primary: %d, %v", killed, err)
	}
	mustExec(t, s.db(t, 0, true), "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatalf("replication broken by the kills: %v", err)
	}
	st := s.status(t, 1)
	if st.Replica == nil || !st.Replica.Healthy() {
		t.Fatalf("replica after kills: %+v", st.Replica)
	}
}

func TestStatusWithoutReplication(t *testing.T) {
	s := startSites(t, 1)
	st := s.status(t, 0)
	if st.Flavor != "mariadb" || st.Replica != nil || st.ServerID != 1 || !st.Writable() {
		t.Fatalf("status: %+v", st)
	}
	err := s.in[0].DrainRelayLog(ctxFor(t, 5*time.Second), time.Second)
	if !errors.Is(err, mysql.ErrNotReplica) {
		t.Fatalf("drain on a primary: %v, want ErrNotReplica", err)
	}
}

// keeper is what the sidecar's termination uses beyond Instance.
type keeper interface {
	FenceKeepSessions(ctx context.Context) error
	AppSessions(ctx context.Context) (int, error)
}

// TestFenceKeepSessions: the termination's fence sets and verifies
// read-only like Fence, but an application session survives it and may
// still read; AppSessions counts it, and KillAppConnections ends it.
func TestFenceKeepSessions(t *testing.T) {
	s := startSites(t, 1, testbed.WithoutReplication())
	ctx := ctxFor(t, 30*time.Second)
	if err := s.in[0].Unfence(ctx); err != nil {
		t.Fatal(err)
	}
	app := s.db(t, 0, true)
	app.SetMaxOpenConns(1)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	k, ok := s.in[0].(keeper)
	if !ok {
		t.Fatalf("%T lacks FenceKeepSessions and AppSessions", s.in[0])
	}
	if n, err := k.AppSessions(ctx); err != nil || n != 1 {
		t.Fatalf("AppSessions = %d, %v; want 1", n, err)
	}
	if err := k.FenceKeepSessions(ctx); err != nil {
		t.Fatalf("fence keeping sessions: %v", err)
	}
	if st := s.status(t, 0); !st.Fenced() || st.Writable() {
		t.Fatalf("status after the fence: fenced=%v writable=%v", st.Fenced(), st.Writable())
	}
	if n, err := k.AppSessions(ctx); err != nil || n != 1 {
		t.Fatalf("AppSessions after the fence = %d, %v; want the session kept", n, err)
	}
	if n := count(t, app, "SELECT COUNT(*) FROM t"); n != 1 {
		t.Fatalf("read on the kept session: %d rows", n)
	}
	if _, err := app.ExecContext(ctx, "INSERT INTO t VALUES (2)"); errno(err) != 1290 {
		t.Fatalf("write after the fence: %v, want error 1290", err)
	}
	if _, err := s.in[0].KillAppConnections(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the session is gone", func() bool {
		n, err := k.AppSessions(ctx)
		return err == nil && n == 0
	})
}
