//go:build envtest

package controller_test

import (
	"context"
	"database/sql"
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

// With required durability and one acknowledger slot, a replica cut off
// from the primary (its IO thread retries on an error) gives its slot to
// a connected one: before, it kept the slot, and every commit waited for
// an acknowledgement that could not come.
func TestSemiSyncSlotLeavesACutOffReplica(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
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
