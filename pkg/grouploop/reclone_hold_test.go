package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneNeverHoldsTheActiveSite: status names c active while a
// recovery of c says Cloning (a status edited by hand, a restored backup
// of the CR, or any bug that lets it happen). The active site is never
// held (it would be admin-fenced, and the only writer fenced by SQL on
// every pass, with nothing to release it), and the reclone stops with
// ActiveSite without holding c.
func TestRecloneNeverHoldsTheActiveSite(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryCloning)
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-10"), ServerID: "0-3"}
	w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
		Replication: topology.Replication{Running: true}}
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		st.ActiveSite = "c"
		for i := range st.Sites {
			st.Sites[i].DivergentGtid = ""
		}
	})
	w.pass()
	w.pass()
	r := w.recovery()
	last := w.decisions[len(w.decisions)-1]
	t.Logf("recovery %s failedPhase %s holds %v; decision %s adminFence=%v", r.Phase, r.FailedPhase, r.Holds(), last.String(), last.AdminFence)
	if last.AdminFence {
		t.Fatalf("the active site is fenced by a reclone that already failed: %s", last.String())
	}
	if r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneActiveSite || r.Holds() {
		t.Fatalf("recovery %+v: want Failed, ActiveSite, not holding", r)
	}
}

// TestRecloningSiteIsNoAcknowledgerToWaitFor: c is cloned (mysqld stopped)
// and its last record said it could acknowledge under required. a is lost;
// b holds all a wrote. c's data is being replaced, and before that b was
// proven to hold all of it: the failover to b does not wait for c.
func TestRecloningSiteIsNoAcknowledgerToWaitFor(t *testing.T) {
	for _, phase := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp} {
		t.Run(string(phase), func(t *testing.T) {
			w := runningWorld(t, phase)
			w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateUnreachable, FenceConfirmed: true}
			w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable, FenceConfirmed: true, MayAcknowledge: true}
			w.pass()
			if d := w.decisions[0]; d.Kind != topology.KindFailover || d.Target != "b" {
				t.Fatalf("decision %s, want a failover to b", d.String())
			}
		})
	}
}
