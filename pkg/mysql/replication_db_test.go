//go:build db

package mysql_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

func TestWaitForGTIDReachedAndTimeout(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	want := s.executed(t, 0)
	if err := s.in[1].WaitForGTID(ctx, want, 5*time.Second); err != nil {
		t.Fatalf("replica: %v", err)
	}
	// A primary has its own writes: it is reached at once.
	if err := s.in[0].WaitForGTID(ctx, want, time.Second); err != nil {
		t.Fatalf("primary, own writes: %v", err)
	}
	if n := count(t, s.db(t, 1, true), "SELECT COUNT(*) FROM t"); n != 1 {
		t.Fatalf("replica rows = %d after the wait", n)
	}

	for range 2 {
		if err := s.in[1].StopReplication(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	start := time.Now()
	err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 300*time.Millisecond)
	if !errors.Is(err, mysql.ErrTimeout) {
		t.Fatalf("wait on a stopped replica: %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a 300 ms wait took %s", took)
	}
}

func TestDrainRelayLog(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	op := s.db(t, 1, false)
	mustExec(t, op, "STOP REPLICA SQL_THREAD")
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1), (2), (3)")
	primaryPos := s.status(t, 0).GTIDBinlogPos
	eventually(t, 5*time.Second, "IO thread receives", func() bool {
		st := s.status(t, 1)
		return st.Replica != nil && st.Replica.Retrieved == primaryPos
	})
	err := s.in[1].DrainRelayLog(ctx, 200*time.Millisecond)
	if !errors.Is(err, mysql.ErrTimeout) {
		t.Fatalf("drain with the SQL thread stopped: %v, want ErrTimeout", err)
	}
	mustExec(t, op, "START REPLICA SQL_THREAD")
	if err := s.in[1].DrainRelayLog(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if st := s.status(t, 1); st.GTIDSlavePos != primaryPos {
		t.Fatalf("replica slave pos %q after drain, want %q", st.GTIDSlavePos, primaryPos)
	}
}

// Ten round trips (twenty switchovers) under a writer, then every
// acknowledged row is on both servers and neither has errant transactions.
func TestPromoteAndRepointRoundTrips(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 120*time.Second)
	var primary atomicInt
	w := startWriters(t, s, 2, primary.load)
	for round := range 20 {
		from, to := round%2, 1-round%2
		time.Sleep(30 * time.Millisecond)
		if _, err := s.switchover(ctx, from, to); err != nil {
			t.Fatalf("switchover %d (%d -> %d): %v", round, from, to, err)
		}
		primary.store(to)
		// Promote and ReplicateFrom are idempotent.
		if _, err := s.in[to].Promote(ctx, mysql.PromoteOptions{}); err != nil {
			t.Fatalf("second promote: %v", err)
		}
		if err := s.in[from].ReplicateFrom(ctx, s.endpoint(to), s.repl()); err != nil {
			t.Fatalf("second replicate-from: %v", err)
		}
	}
	time.Sleep(30 * time.Millisecond)
	acked := w.halt()
	if len(acked) < 20 {
		t.Fatalf("only %d writes acknowledged", len(acked))
	}
	final := primary.load()
	if err := s.in[1-final].WaitForGTID(ctx, s.executed(t, final), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		have := ids(t, s.db(t, i, true))
		for _, a := range acked {
			if !have[a.id] {
				t.Fatalf("server %d lost acknowledged row %d (written on %d)", i, a.id, a.server)
			}
		}
		errant, err := s.in[i].ErrantAgainst(ctx, s.executed(t, 1-i))
		if err != nil || !errant.IsEmpty() {
			t.Fatalf("server %d errant: %v, %v", i, errant, err)
		}
	}
	st := s.status(t, 1-final)
	if st.Replica == nil || !st.Replica.Healthy() || st.Replica.SourcePort != s.c.Port(final) {
		t.Fatalf("final replica: %+v", st.Replica)
	}
}

func TestErrantWriteIsReportedAndBreaksReplication(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// The operator account holds READ_ONLY ADMIN, so it can write on the replica.
	mustExec(t, s.db(t, 1, false), "INSERT INTO app.t VALUES (100)")
	replica := s.status(t, 1)
	errant, err := s.in[1].ErrantAgainst(ctx, s.executed(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	// The errant GTID is 0-2-3: domain 0, server 2, the seq after the two
	// replicated transactions.
	if replica.GTIDBinlogPos != "0-2-3" || errant.String() != "0-2:3" || errant.Count() != 1 {
		t.Fatalf("errant %q (binlog pos %q), want 0-2:3", errant, replica.GTIDBinlogPos)
	}
	if back, err := s.in[0].ErrantAgainst(ctx, replica.Executed); err != nil || !back.IsEmpty() {
		t.Fatalf("primary errant against replica: %v, %v", back, err)
	}

	// The next replicated event collides with the errant seq: error 1950.
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	brokenWith(t, s, 1, 1950)
	err = s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second)
	if !errors.Is(err, mysql.ErrReplicationBroken) || !errors.Is(err, mysql.ErrDiverged) {
		t.Fatalf("wait on broken replication: %v", err)
	}

	// Re-pointing by current_pos is refused by the source: error 1236.
	if err := s.in[1].ReplicateFrom(ctx, s.endpoint(0), s.repl()); err != nil {
		t.Fatal(err)
	}
	brokenWith(t, s, 1, 1236)
}

// brokenWith waits until server i reports replication broken with errno.
func brokenWith(t *testing.T, s *sites, i, errno int) {
	t.Helper()
	var last *mysql.ReplicaStatus
	eventually(t, 10*time.Second, fmt.Sprintf("replication breaks with %d", errno), func() bool {
		last = s.status(t, i).Replica
		return last != nil && last.Err() != nil && (last.LastSQLErrno == errno || last.LastIOErrno == errno)
	})
	err := last.Err()
	if !errors.Is(err, mysql.ErrReplicationBroken) || !errors.Is(err, mysql.ErrDiverged) {
		t.Fatalf("replica error %v: want ErrReplicationBroken and ErrDiverged", err)
	}
	if last.Healthy() {
		t.Fatalf("broken replica reported healthy: %+v", last)
	}
	t.Logf("broken as expected: %v", err)
}

// ids reads every id in app.w.
func ids(t *testing.T, db *sql.DB) map[int64]bool {
	t.Helper()
	rows, err := db.QueryContext(ctxFor(t, 10*time.Second), "SELECT id FROM w")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
