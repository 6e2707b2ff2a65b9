//go:build db

package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestUnfenceRefusesAReplicatingServer (issue 15): a salvage into a
// server is replication started under the topology lock, and it runs on
// after the lock is let go. An unfence that landed then made the server
// writable while the old primary's tail still applied on top of its new
// writes. Unfence now takes the lock and refuses a server that
// replicates: the server stays read-only and replicating.
func TestUnfenceRefusesAReplicatingServer(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	mustExec(t, s.db(t, 0, true), "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	err := s.in[1].Unfence(ctx)
	if !errors.Is(err, mysql.ErrUnfenceReplicating) {
		t.Fatalf("unfence of a replicating server: %v, want ErrUnfenceReplicating", err)
	}
	st := s.status(t, 1)
	if !st.Fenced() || st.Replica == nil || !st.Replica.SQLRunning {
		t.Fatalf("after the refused unfence: fenced %v, replica %+v; want read-only and replicating", st.Fenced(), st.Replica)
	}
	// Stopped, it is unfenced.
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].Unfence(ctx); err != nil {
		t.Fatalf("unfence of a stopped replica: %v", err)
	}
}

// TestUnfenceWaitsForTheTopologyLock: while another step (a salvage's
// start, a promotion) holds the server's topology lock, an unfence does
// not run beside it: it waits up to the lock wait and then fails with
// ErrTopologyLockBusy, leaving the server read-only.
func TestUnfenceWaitsForTheTopologyLock(t *testing.T) {
	s := startSites(t, 1)
	ctx := ctxFor(t, 30*time.Second)
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := s.db(t, 0, false).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var got int
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('bloodraven.topology', 1)").Scan(&got); err != nil || got != 1 {
		t.Fatalf("take the lock: %d %v", got, err)
	}
	err = s.in[0].Unfence(ctx)
	if !errors.Is(err, mysql.ErrTopologyLockBusy) {
		t.Fatalf("unfence under another step's lock: %v, want ErrTopologyLockBusy", err)
	}
	if st := s.status(t, 0); !st.Fenced() {
		t.Fatal("the server was unfenced while another step held its topology lock")
	}
	if _, err := conn.ExecContext(ctx, "DO RELEASE_ALL_LOCKS()"); err != nil {
		t.Fatal(err)
	}
	if err := s.in[0].Unfence(ctx); err != nil {
		t.Fatalf("unfence once the lock is free: %v", err)
	}
}
