//go:build envtest

package controller_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
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
