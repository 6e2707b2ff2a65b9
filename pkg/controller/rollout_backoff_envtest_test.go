//go:build envtest

package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The count of the update's failed switchovers lives in status, so a
// restarted operator keeps it: with five failures on record the update
// rolls the replicas, then starts no switchover of its own and waits for
// a person (WaitingForUser, UpdateStalled with SwitchoverRetriesExhausted,
// a Warning Event). A person's planned failover goes through, the update
// ends by itself, and the count is cleared.
func TestRolloutSwitchoverRetriesExhausted(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	sim := e.simulateDeployments()
	op := e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(30*time.Second, "the update begun", func() bool {
		return e.get().Status.Phase == v1alpha1.GroupPhaseUpdating
	})
	op.stop()

	// Five failed switchovers on record, as an earlier process left them.
	g := e.get()
	g.Status.UpdateSwitchover = &v1alpha1.UpdateSwitchoverStatus{Failures: 5,
		LastFailureTime: metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second)), LastFailure: "LagTimeout"}
	if err := cp.Client.Status().Update(e.t.Context(), g); err != nil {
		t.Fatalf("record five failures: %v", err)
	}
	e.startOperator() // a fresh process: only status remembers the failures
	e.eventually(90*time.Second, "WaitingForUser after the replicas", func() bool {
		g := e.get()
		return g.Status.Phase == v1alpha1.GroupPhaseWaitingForUser && len(sim.restarted()) == 2
	})
	g = e.get()
	c := metaCondition(g, v1alpha1.ConditionUpdateStalled)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonSwitchoverRetriesExhausted ||
		!strings.Contains(g.Status.Message, "failed 5 times in a row (last: LagTimeout)") ||
		!strings.Contains(g.Status.Message, "kubectl annotate mfg orders") {
		t.Fatalf("condition %+v, message %q", c, g.Status.Message)
	}
	if g.Status.PlannedFailover != nil || g.Status.ActiveSite != "a" {
		t.Fatalf("the update switched over by itself: %+v", g.Status.PlannedFailover)
	}
	e.assertEvents(v1alpha1.EventUpdateStalled, v1alpha1.EventUpdateWaitingForUser)

	e.annotate("b")
	e.eventually(90*time.Second, "the update ends after the person's switchover", func() bool {
		g := e.get()
		return g.Status.ActiveSite == "b" && g.Status.Phase == v1alpha1.GroupPhaseNone && len(sim.restarted()) == 3
	})
	g = e.get()
	if u := g.Status.UpdateSwitchover; u == nil || u.Failures != 0 {
		t.Fatalf("updateSwitchover after the update %+v, want the count cleared and the time kept", u)
	}
	if c := metaCondition(g, v1alpha1.ConditionUpdateStalled); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("still stalled: %+v", c)
	}
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
}
