//go:build envtest

package controller_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A stuck update does not refuse planned failovers forever. The restarted
// replica b never comes back: within the progress deadline a planned
// failover is refused with ConcurrentOperation and told when it no longer
// is; past it the update is reported stalled (condition and Warning Event),
// a planned failover to c runs, and the update takes no step meanwhile.
// Once b comes back the update goes on and is no longer stalled.
func TestRolloutStalledAdmitsPlanned(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(func(spec map[string]any) {
		spec["updates"] = map[string]any{"progressDeadline": "10s"}
		spec["instance"] = map[string]any{"startDelay": "5s", "stopDelay": "5s"}
	})
	sim := e.simulateDeployments()
	release := sim.holdSite("b")
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()

	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(30*time.Second, "b down for its update", func() bool {
		g := e.get()
		return slices.Equal(sim.restarted(), []string{"b"}) && g.Status.Phase == v1alpha1.GroupPhaseUpdating &&
			strings.Contains(g.Status.Message, "waiting for b") && g.Status.UpdateProgressTime != nil
	})
	e.annotate("c")
	g := e.planned("c", v1alpha1.PhaseFailed, 20*time.Second)
	b := g.Status.PlannedFailover
	if b.Reason != v1alpha1.ReasonConcurrentOperation || b.RetryAfter == nil ||
		!strings.Contains(b.Message, "progressDeadline") {
		t.Fatalf("planned failover within the deadline: %+v, want ConcurrentOperation with retryAfter", b)
	}
	stalled := func(want metav1.ConditionStatus) func() bool {
		return func() bool {
			c := metaCondition(e.get(), v1alpha1.ConditionUpdateStalled)
			return c != nil && c.Status == want
		}
	}
	e.eventually(30*time.Second, "UpdateStalled true", stalled(metav1.ConditionTrue))
	g = e.get()
	if c := metaCondition(g, v1alpha1.ConditionUpdateStalled); c.Reason != v1alpha1.ReasonProgressDeadlineExceeded ||
		!strings.Contains(c.Message, "waiting for b") || !strings.HasPrefix(g.Status.Message, "stalled") ||
		g.Status.Phase != v1alpha1.GroupPhaseUpdating {
		t.Fatalf("stalled: condition %+v, phase %q message %q", c, g.Status.Phase, g.Status.Message)
	}
	e.assertEvents(v1alpha1.EventUpdateStalled)

	e.annotate("c:maxLagWait=1m") // another value than the refused request's
	g = e.planned("c:maxLagWait=1m", v1alpha1.PhaseSucceeded, 30*time.Second)
	if g.Status.ActiveSite != "c" {
		t.Fatalf("active site %s after the planned failover, want c", g.Status.ActiveSite)
	}
	if got := sim.restarted(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("restarts %v while b was stuck, want b only", got)
	}
	release()
	e.eventually(60*time.Second, "the update goes on", func() bool {
		return len(sim.restarted()) >= 2
	})
	e.eventually(10*time.Second, "UpdateStalled false", stalled(metav1.ConditionFalse))
	if got := sim.restarted(); got[1] != "a" {
		t.Fatalf("restarts %v, want the old primary a (now a replica) after b", got)
	}
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
}
