//go:build envtest

package controller_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
)

// semiSyncOn is a site's status.sites[].semiSync as source or replica.
func semiSyncOn(g *v1alpha1.MysqlFailoverGroup, name string, source bool, acking int32) bool {
	s := site(g, name).SemiSync
	if s == nil {
		return false
	}
	if source {
		return s.Source && s.Waiting && !s.Replica && s.AcknowledgingReplicas == acking
	}
	return s.Replica && !s.Source
}

// With semi-sync required, the operator makes the active site the source
// and the other its acknowledging replica, and moves both roles with a
// planned failover; SemiSyncDegraded says the commits wait.
func TestSemiSyncFollowsTheActiveSite(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(func(spec map[string]any) {
		spec["mysql"].(map[string]any)["semiSync"] = map[string]any{"enabled": true, "dataDurability": "required"}
	})
	run := e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.eventually(20*time.Second, "a waits for b's acknowledgements", func() bool {
		g := e.get()
		return semiSyncOn(g, "a", true, 1) && semiSyncOn(g, "b", false, 0) &&
			condIs(g, v1alpha1.ConditionSemiSyncDegraded, metav1.ConditionFalse, v1alpha1.ReasonSemiSyncWaiting)
	})
	if n := testutil.ToFloat64(run.op.Metrics().SemiSyncClients.WithLabelValues(e.ns, "orders")); n != 1 {
		t.Errorf("bloodraven_semisync_clients = %v, want 1", n)
	}
	e.createWriteTable("a")

	e.annotate("b")
	e.planned("b", v1alpha1.PhaseSucceeded, 30*time.Second)
	e.eventually(30*time.Second, "b waits for a's acknowledgements", func() bool {
		g := e.get()
		return semiSyncOn(g, "b", true, 1) && semiSyncOn(g, "a", false, 0) &&
			condIs(g, v1alpha1.ConditionSemiSyncDegraded, metav1.ConditionFalse, v1alpha1.ReasonSemiSyncWaiting)
	})
}

// Semi-sync off: nothing is turned on, and the condition says it is off.
func TestSemiSyncOffTouchesNothing(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.eventually(10*time.Second, "SemiSyncDegraded off", func() bool {
		return condIs(e.get(), v1alpha1.ConditionSemiSyncDegraded, metav1.ConditionFalse, v1alpha1.ReasonSemiSyncOff)
	})
	g := e.get()
	if site(g, "a").SemiSync != nil || site(g, "b").SemiSync != nil {
		t.Fatalf("semi-sync on with the spec off: a %+v, b %+v", site(g, "a").SemiSync, site(g, "b").SemiSync)
	}
}

// requiredWithBAcking runs e's group a, b, c under required durability
// until b holds the one acknowledger slot, with the writers' table made.
func requiredWithBAcking(e *env) {
	e.t.Helper()
	e.createGroup(func(spec map[string]any) {
		spec["mysql"].(map[string]any)["semiSync"] = map[string]any{"enabled": true, "dataDurability": "required"}
	})
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	e.eventually(30*time.Second, "b holds the slot", func() bool {
		g := e.get()
		return semiSyncOn(g, "a", true, 1) && semiSyncOn(g, "b", false, 0) && !semiSyncOn(g, "c", false, 0)
	})
	e.createWriteTable("a")
}

// With required durability and one acknowledger slot, a replica cut off
// from the primary (its IO thread retries on an error) gives its slot to
// a connected one: before, it kept the slot, and every commit waited for
// an acknowledgement that could not come.
func TestSemiSyncSlotLeavesACutOffReplica(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	requiredWithBAcking(e)

	// b's receiver now fails on every retry: the primary refuses it.
	e.rootExec("b", "STOP SLAVE")
	e.rootExec("b", "CHANGE MASTER TO MASTER_PASSWORD='not-the-password'")
	e.rootExec("b", "START SLAVE")
	e.eventually(30*time.Second, "c takes the slot from b", func() bool {
		g := e.get()
		return semiSyncOn(g, "a", true, 1) && semiSyncOn(g, "c", false, 0) && !semiSyncOn(g, "b", false, 0)
	})
	db, err := sql.Open("mysql", e.db.RootDSN(e.index("a")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "INSERT INTO "+testbed.AppDatabase+".planned_w VALUES (1, 1)"); err != nil {
		t.Fatalf("a commit on a, after c took the slot: %v", err)
	}
}

// With required durability, the acknowledging replica b cut off from the
// operator (it still replicates from a and acknowledges its commits), and
// then the primary a cut off from the operator: promoting c could lose
// commits only b holds, so c stays read-only and the failover is blocked
// with AcknowledgerUnreachable; a, still the primary, commits with b's
// acknowledgement. Once b answers, the failover promotes the freshest site,
// and a commit acknowledged while the operator could read neither a nor b
// is on the new primary.
func TestSemiSyncUnreadAcknowledgerBlocksTheFailover(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	pa, pb := e.proxy("a"), e.proxy("b")
	requiredWithBAcking(e)

	e.blackhole(pb)
	e.eventually(20*time.Second, "b unreachable", func() bool { return site(e.get(), "b").State == v1alpha1.StateUnreachable })
	e.blackhole(pa)
	e.eventually(20*time.Second, "a unreachable", func() bool { return site(e.get(), "a").State == v1alpha1.StateUnreachable })
	// A commit on a, which b acknowledges: the only copy besides a's is b's.
	db, err := sql.Open("mysql", e.db.RootDSN(e.index("a")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "INSERT INTO "+testbed.AppDatabase+".planned_w VALUES (7, 7)"); err != nil {
		t.Fatalf("a commit on a, acknowledged by b: %v", err)
	}
	e.eventually(30*time.Second, "the failover blocked on b", func() bool {
		for _, ev := range e.events(v1alpha1.EventFailoverBlocked) {
			if strings.Contains(ev.Note, v1alpha1.ReasonAcknowledgerUnread) {
				return true
			}
		}
		return false
	})
	if e.writable("c") {
		t.Fatal("c made writable while b, which may hold acknowledged commits c lacks, cannot be read")
	}

	for _, stream := range []string{"upstream", "downstream"} {
		if err := pb.Toxics.RemoveToxic(context.Background(), "blackhole-"+stream); err != nil {
			t.Fatal(err)
		}
	}
	e.eventually(60*time.Second, "a new primary", func() bool {
		g := e.get()
		return g.Status.ActiveSite != "a" && e.writable(g.Status.ActiveSite)
	})
	active := e.get().Status.ActiveSite
	adb, err := sql.Open("mysql", e.db.RootDSN(e.index(active)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = adb.Close() }()
	var n int
	if err := adb.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+testbed.AppDatabase+
		".planned_w WHERE writer = 7").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the commit b acknowledged on the new primary %s: count %d, %v", active, n, err)
	}
}
