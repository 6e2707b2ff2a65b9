//go:build db

package mysql_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// receivedAhead leaves a real MariaDB group as the received ranking is
// meant for: server 0 (the primary) wrote rows 1-4 and is killed; server 1
// applied rows 1-3 and stopped replicating; server 2 applied row 1 only
// (its SQL thread stopped) but its IO thread received rows 2-4. It returns
// the two replicas as the poll loop sees them.
func receivedAhead(t *testing.T) (*sites, []topology.SiteView) {
	s := startSites(t, 3)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	for _, i := range []int{1, 2} {
		if err := s.in[i].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, s.db(t, 2, false), "STOP REPLICA SQL_THREAD")
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	mustExec(t, app, "INSERT INTO t VALUES (3)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s.db(t, 1, false), "STOP REPLICA")
	mustExec(t, app, "INSERT INTO t VALUES (4)")
	pos := s.status(t, 0).GTIDBinlogPos
	eventually(t, 5*time.Second, "server 2's IO thread receives row 4", func() bool {
		st := s.status(t, 2)
		return st.Replica != nil && st.Replica.Retrieved == pos
	})
	s.c.Kill(0)
	var views []topology.SiteView
	for _, i := range []int{1, 2} {
		st := s.status(t, i)
		v := topology.SiteView{Name: []string{"", "b", "c"}[i], Role: v1alpha1.RolePrimaryCandidate,
			State: v1alpha1.StateReadOnly, Executed: st.Executed}
		if st.Replica == nil {
			t.Fatalf("server %d is no replica", i)
		}
		got, err := st.Replica.RetrievedSet(st.Flavor)
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
		v.Replication.Retrieved = got
		views = append(views, v)
	}
	return s, views
}

// TestReceivedRankingMariaDB: on real MariaDB, the replica that received
// the most (Gtid_IO_Pos) is chosen over one that applied more of the
// earlier stream, and its drain applies what it was ranked on. When its
// mysqld restarts before the drain (the primary gone, so nothing is
// fetched again), its relay log no longer holds it: the drain ends short
// and topology.DrainedShort names what is missing, which is what keeps
// the sequence from promoting it on that ranking.
func TestReceivedRankingMariaDB(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := map[bool]string{false: "relay log kept", true: "restarted before the drain"}[restart]
		t.Run(name, func(t *testing.T) {
			s, views := receivedAhead(t)
			byExecuted := views[0].Executed.Count() >= views[1].Executed.Count()
			if c := topology.SelectCandidate(views); c.Site != "c" || !byExecuted {
				t.Fatalf("picked %+v from %+v; want c, which executed less (%v)", c, views, byExecuted)
			}
			if restart {
				if err := s.c.Restart(2); err != nil {
					t.Fatal(err)
				}
			} else {
				mustExec(t, s.db(t, 2, false), "START REPLICA SQL_THREAD")
			}
			if st := s.status(t, 2); st.Replica != nil {
				t.Logf("server 2 before the drain: Gtid_IO_Pos %q, executed %s, probed received %s",
					st.Replica.Retrieved, st.Executed, views[1].Replication.Retrieved)
			}
			_ = s.in[2].DrainRelayLog(ctxFor(t, 10*time.Second), 3*time.Second)
			short := topology.DrainedShort(views[1], s.executed(t, 2))
			rows := count(t, s.db(t, 2, true), "SELECT COUNT(*) FROM t")
			switch {
			case !restart && (!short.IsEmpty() || rows != 4):
				t.Fatalf("after the drain: short %s, %d rows; want nothing short, 4 rows", short, rows)
			case restart && (short.IsEmpty() || rows == 4):
				t.Fatalf("after a restart: short %q, %d rows; want the relay log's rows missing and named", short, rows)
			}
		})
	}
}

// TestUptimeTellsARestart (issue 15, gap 3), on real MariaDB: the probe's
// uptime places mysqld's start; after a restart the next read places it
// later, and topology.RestartedSince says so (JudgeDrain then takes the
// relay log the site was ranked on for gone). Without a restart it does
// not.
func TestUptimeTellsARestart(t *testing.T) {
	s := startSites(t, 2)
	// A server a moment old reports Uptime 0 (whole seconds); the read still
	// counts as known.
	probe := s.status(t, 1)
	started := time.Now().Add(-probe.Uptime)
	if probe.Uptime <= 0 {
		t.Fatalf("uptime %s: not read", probe.Uptime)
	}
	time.Sleep(6 * time.Second) // past the slack of whole seconds
	again := s.status(t, 1)
	if topology.RestartedSince(started, again.Uptime, time.Now()) {
		t.Fatalf("uptime %s then %s: taken for a restart without one", probe.Uptime, again.Uptime)
	}
	if err := s.c.Restart(1); err != nil {
		t.Fatal(err)
	}
	after := s.status(t, 1)
	if !topology.RestartedSince(started, after.Uptime, time.Now()) {
		t.Fatalf("uptime %s before, %s after a restart: not told", again.Uptime, after.Uptime)
	}
}
