//go:build db

package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestSalvageTakesTheTail: the primary writes a tail its replica never
// received, and restarts (its my.cnf says read_only=ON: it comes back
// fenced). SalvageFrom brings exactly the tail up to the set it is given,
// not what the old primary holds beyond it, and leaves replication stopped.
func TestSalvageTakesTheTail(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	mustExec(t, app, "INSERT INTO t VALUES (3)")
	until := s.executed(t, 0)
	mustExec(t, app, "INSERT INTO t VALUES (4)") // beyond until: never applied
	if err := s.c.Restart(0); err != nil {
		t.Fatal(err)
	}
	if st := s.status(t, 0); !st.Fenced() {
		t.Fatal("the old primary came back writable")
	}

	sctx := ctxFor(t, 10*time.Second)
	got, err := s.in[1].SalvageFrom(sctx, s.endpoint(0), s.repl(), until, s.executed(t, 1), nil)
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	if !gtid.Lacks(got, until).IsEmpty() {
		t.Fatalf("the replica holds %s after salvage, lacking %s of %s", got, gtid.Lacks(got, until), until)
	}
	if n := count(t, s.db(t, 1, true), "SELECT COUNT(*) FROM t"); n != 3 {
		t.Fatalf("replica rows %d after salvage, want 3 (1-3; 4 is beyond until)", n)
	}
	st := s.status(t, 1)
	if !st.Fenced() || st.Replica == nil || st.Replica.SQLRunning || st.Replica.IORunning == mysql.ThreadYes {
		t.Fatalf("replica after salvage: fenced %v, replication %+v; want fenced and stopped", st.Fenced(), st.Replica)
	}
}

// TestSalvageRefusesADivergedReplica: a replica holding a write the old
// primary lacks is refused by the old primary (MariaDB's 1236, replication
// by current_pos), or, as MariaDB does when the replica holds another
// server's write at the seq of until, its UNTIL is met at once: nothing is
// applied, the salvage ends at once with an error, and replication is
// stopped. (The operator's decision refuses such a salvage before it
// starts: topology.DecideSalvage.)
func TestSalvageRefusesADivergedReplica(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	// An errant write on the replica, as its operator account (read_only
	// exempts it): the same seq under another server.
	mustExec(t, s.db(t, 1, false), "INSERT INTO app.t VALUES (100)")
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	before := s.executed(t, 1)
	sctx := ctxFor(t, 5*time.Second)
	start := time.Now()
	got, err := s.in[1].SalvageFrom(sctx, s.endpoint(0), s.repl(), s.executed(t, 0), s.executed(t, 1), nil)
	if err == nil || !(errors.Is(err, mysql.ErrDiverged) || errors.Is(err, mysql.ErrSalvageStopped)) {
		t.Fatalf("salvage of a diverged replica: %v, want diverged or stopped short", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the refusal took %s", took)
	}
	t.Logf("refused after %s: %v; replica %+v", time.Since(start).Round(time.Millisecond), err, s.status(t, 1).Replica)
	if !got.Equal(before) {
		t.Fatalf("the replica went from %s to %s", before, got)
	}
	if n := count(t, s.db(t, 1, true), "SELECT COUNT(*) FROM t WHERE id = 1"); n != 0 {
		t.Fatal("the old primary's row reached the diverged replica")
	}
	if st := s.status(t, 1); st.Replica != nil && (st.Replica.SQLRunning || st.Replica.IORunning == mysql.ThreadYes) {
		t.Fatalf("replication still runs: %+v", st.Replica)
	}
}

// TestSalvageRefusesAWritableTarget: a target that is writable (a new
// leader promoted it while this operator was paused) is refused: its
// replication and its read-only state are left as they were, and its
// clients keep writing.
func TestSalvageRefusesAWritableTarget(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	mustExec(t, s.db(t, 0, true), "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Made writable with its replication stopped but kept (Unfence refuses
	// a server whose replication runs).
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].Unfence(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	before := s.status(t, 1)
	sctx := ctxFor(t, 5*time.Second)
	_, err := s.in[1].SalvageFrom(sctx, s.endpoint(0), s.repl(), s.executed(t, 0), s.executed(t, 1), nil)
	if !errors.Is(err, mysql.ErrSalvageTargetWritable) {
		t.Fatalf("salvage into a writable server: %v, want ErrSalvageTargetWritable", err)
	}
	after := s.status(t, 1)
	if after.Fenced() || after.Replica == nil || before.Replica == nil ||
		after.Replica.SQLRunning != before.Replica.SQLRunning || after.Replica.SourcePort != before.Replica.SourcePort {
		t.Fatalf("target changed: fenced %v -> %v, replication %+v -> %+v", before.Fenced(), after.Fenced(), before.Replica, after.Replica)
	}
	mustExec(t, s.db(t, 1, true), "INSERT INTO app.t VALUES (1)")
}

// TestSalvageStoppedWhenCancelled: the salvage's context is cancelled
// while it waits (the operator is shutting down): replication is stopped
// all the same, on a connection of its own, so the target does not stay
// connected to the old primary applying its binlogs.
func TestSalvageStoppedWhenCancelled(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	mustExec(t, s.db(t, 0, true), "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	// A set the old primary never reaches: the salvage waits until cancelled.
	until := s.executed(t, 0).Union(gtid.MustParseSet(fmt.Sprintf("0-%d:1-1000000", s.status(t, 0).ServerID)))
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	time.AfterFunc(2*time.Second, cancel)
	start := time.Now()
	_, err := s.in[1].SalvageFrom(sctx, s.endpoint(0), s.repl(), until, s.executed(t, 1), nil)
	if err == nil {
		t.Fatal("a cancelled salvage reported success")
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Fatalf("the cancelled salvage took %s", took)
	}
	st := s.status(t, 1)
	if st.Replica != nil && (st.Replica.SQLRunning || st.Replica.IORunning != mysql.ThreadNo) {
		t.Fatalf("replication still runs after a cancelled salvage (%v): %+v", err, st.Replica)
	}
}

// TestSalvageOrderedWithAPromotion: a deposed operator's salvage passed
// its read-only check on the target, and then a new leader promotes that
// target (Promote, on its own connection). Whatever the order the two
// reach the server in, nothing of the old primary's tail is applied on the
// target after the promotion captured its set: the salvage either runs
// wholly before the promotion (whose replication reset stops it) or is
// refused by it. Before the two were ordered on the server (a named lock
// held from the check to the start), the promotion completed in that
// window and the tail then applied on top of the new primary's writes.
func TestSalvageOrderedWithAPromotion(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	mustExec(t, app, "INSERT INTO t VALUES (3)")
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	until := s.executed(t, 0)

	leader := operatorAt(t, s.c, s.c.Addr(1)) // the new leader's own connections
	type promoted struct {
		set gtid.Set
		err error
	}
	done := make(chan promoted, 1)
	restore := mysql.SetSalvageCheckedHook(func() {
		go func() {
			set, err := leader.Promote(ctxFor(t, 30*time.Second), mysql.PromoteOptions{})
			done <- promoted{set.Executed, err}
		}()
		select { // the promotion finishes here unless the salvage holds it back
		case p := <-done:
			done <- p
		case <-time.After(300 * time.Millisecond): // under the lock's wait of 1 s
		}
	})
	defer restore()
	_, serr := s.in[1].SalvageFrom(ctxFor(t, 10*time.Second), s.endpoint(0), s.repl(), until, s.executed(t, 1), nil)
	restore()
	p := <-done
	if p.err != nil {
		t.Fatalf("promotion: %v (salvage: %v)", p.err, serr)
	}
	mustExec(t, s.db(t, 1, true), "INSERT INTO app.t VALUES (100)") // the new primary's first write
	time.Sleep(2 * time.Second)                                     // time for a running salvage to apply
	after := s.executed(t, 1)
	if n := after.Subtract(p.set).Count(); n != 1 {
		t.Fatalf("the target applied %d transactions after its promotion (set %s, now %s; salvage: %v), "+
			"want only its own write: the old tail landed on top of the new primary's writes", n, p.set, after, serr)
	}
	if st := s.status(t, 1); st.Fenced() || (st.Replica != nil && (st.Replica.SQLRunning || st.Replica.IORunning == mysql.ThreadYes)) {
		t.Fatalf("the new primary: fenced %v, replication %+v; want writable, not replicating", st.Fenced(), st.Replica)
	}
	t.Logf("salvage: %v; promoted at %s", serr, p.set)
}

// TestSalvageRefusesATargetPromotedSince (review D3): a deposed leader
// read target T (fenced, replicating from the old primary A) and stalled
// past its lease. A new leader promoted T, T took writes, and T was later
// fenced read-only again. The deposed leader's salvage must not point T at
// A and apply A's tail on top of T's new writes: under the lock T's
// executed set is not the one read earlier, nor is A its source any more.
// It is refused, and T is left as it was.
func TestSalvageRefusesATargetPromotedSince(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, app, "INSERT INTO t VALUES (2)") // the old primary's tail
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	until, read := s.executed(t, 0), s.executed(t, 1) // the deposed leader's reads

	if _, err := s.in[1].Promote(ctx, mysql.PromoteOptions{}); err != nil { // the new leader
		t.Fatal(err)
	}
	mustExec(t, s.db(t, 1, true), "INSERT INTO app.t VALUES (100)")
	if err := s.in[1].Fence(ctx); err != nil { // fenced again later
		t.Fatal(err)
	}
	before := s.executed(t, 1)

	_, err := s.in[1].SalvageFrom(ctxFor(t, 10*time.Second), s.endpoint(0), s.repl(), until, read, nil)
	if !errors.Is(err, mysql.ErrSalvageTargetMoved) {
		t.Fatalf("salvage into a target promoted since: %v, want ErrSalvageTargetMoved", err)
	}
	time.Sleep(time.Second)
	if after := s.executed(t, 1); !after.Equal(before) {
		t.Fatalf("the target went from %s to %s: the old tail landed on the new primary's writes", before, after)
	}
	if st := s.status(t, 1); st.Replica != nil && st.Replica.SourcePort == s.c.Port(0) {
		t.Fatalf("the target was pointed back at the old primary: %+v", st.Replica)
	}
}
