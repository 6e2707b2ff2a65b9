//go:build db

package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestPromoteSetsTheSourcePartUnderTheLock (issue 15, gap 1), on real
// MariaDB: a new leader made b (server 1) the semi-sync source
// (PrepareWritable) and has not promoted it yet; a deposed leader's
// salvage into b takes the topology lock first, finds b still read-only,
// holding what it read and replicating from a, and gives b the replica
// part. The promotion that follows sets the source part again under the
// same lock, so the new primary's first commit waits for an
// acknowledgement. A salvage after the promotion is refused with the
// source part untouched.
func TestPromoteSetsTheSourcePartUnderTheLock(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	source := mysql.SemiSyncSettings{Source: true, Timeout: time.Hour, Promoting: true}
	ss := s.in[1].(mysql.SemiSyncer)
	if err := ss.ConfigureSemiSync(ctx, source); err != nil { // the new leader's PrepareWritable
		t.Fatal(err)
	}
	replica := &mysql.SemiSyncSettings{Replica: true}
	if _, err := s.in[1].SalvageFrom(ctxFor(t, 10*time.Second), s.endpoint(0), s.repl(), s.executed(t, 0),
		s.executed(t, 1), replica); err != nil { // the deposed leader's salvage
		t.Fatalf("salvage: %v", err)
	}
	if st := s.status(t, 1); st.SemiSync.SourceEnabled {
		t.Fatal("the salvage left b's source part on: the test does not reach the window")
	}
	if _, err := s.in[1].Promote(ctx, mysql.PromoteOptions{SemiSync: &source}); err != nil {
		t.Fatal(err)
	}
	if st := s.status(t, 1); !st.SemiSync.SourceEnabled || st.SemiSync.ReplicaEnabled {
		t.Fatalf("b promoted with semi-sync source %v, replica %v: want the source part",
			st.SemiSync.SourceEnabled, st.SemiSync.ReplicaEnabled)
	}
	_, err := s.in[1].SalvageFrom(ctxFor(t, 10*time.Second), s.endpoint(0), s.repl(), s.executed(t, 0),
		s.executed(t, 1), replica)
	if !errors.Is(err, mysql.ErrSalvageTargetWritable) {
		t.Fatalf("salvage into the promoted b: %v, want ErrSalvageTargetWritable", err)
	}
	if st := s.status(t, 1); !st.SemiSync.SourceEnabled || st.SemiSync.ReplicaEnabled {
		t.Fatalf("a refused salvage changed the new primary's part: source %v, replica %v",
			st.SemiSync.SourceEnabled, st.SemiSync.ReplicaEnabled)
	}
}

// TestPromoteReportsWhatItsResetDrops (issue 15, gap 2), on real MariaDB:
// b's SQL thread is stopped while its IO thread receives three more
// transactions; Promote's reset drops them from its relay log, and it
// says what its IO thread held received, so that the caller counts them
// (topology.DiscardedAtPromotion). MariaDB names a received position, one
// GTID per domain that stands for the history up to it: each of the three
// is counted all the same (gtid.ReceivedUnapplied).
func TestPromoteReportsWhatItsResetDrops(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s.dbAs(t, 1, s.c.RootDSN(1)), "STOP REPLICA SQL_THREAD")
	for _, q := range []string{"INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)"} {
		mustExec(t, app, q)
	}
	last := s.executed(t, 0)
	eventually(t, 10*time.Second, "b's IO thread receives the three rows", func() bool {
		st := s.status(t, 1)
		got, err := st.Replica.RetrievedSet(st.Flavor)
		return err == nil && gtid.LacksPart(got, last).IsEmpty()
	})
	pr, err := s.in[1].Promote(ctx, mysql.PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dropped := topology.DiscardedAtPromotion(pr.Executed, pr.Retrieved)
	if pr.RetrievedUnknown || dropped.Count() != 3 || !gtid.Lacks(pr.Executed, last).Equal(dropped) {
		t.Fatalf("promotion executed %s, retrieved %s (unknown %v): dropped %s, want the three received rows, %s",
			pr.Executed, pr.Retrieved, pr.RetrievedUnknown, dropped, gtid.Lacks(pr.Executed, last))
	}
	if n := count(t, s.db(t, 1, true), "SELECT COUNT(*) FROM t"); n != 0 {
		t.Fatalf("b holds %d rows: the three were applied, nothing was dropped", n)
	}
	t.Logf("dropped %s (received %s, executed %s)", dropped, pr.Retrieved, pr.Executed)
}
