package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneKeepsAnEmptiedSiteHeld: c's reclone failed in Cloning (its
// datadir may be empty: c is held). A person asks again (accepted:
// Requested, carrying DataIncomplete), then cancels it. The cancel touched
// nothing, but c's datadir is still what the failed clone left: c stays
// held and is never promoted when a is lost.
func TestRecloneKeepsAnEmptiedSiteHeld(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryCloning)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) { failover.SiteRecord(st, "c").DivergentGtid = "" })
	w.rec.fail[v1alpha1.RecoveryCloning] = "stream cut"
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryFailed || !r.Holds() {
		t.Fatalf("setup: %+v", r)
	}
	w.annotate("c:confirm=orders")
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryRequested {
		t.Fatalf("second request not accepted: %+v", r)
	}
	w.annotate("c:cancel")
	w.pass()
	r := w.recovery()
	t.Logf("after cancel: phase=%s failedPhase=%s holds=%v", r.Phase, r.FailedPhase, r.Holds())
	// c's datadir is what the failed clone left: nothing.
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly}
	w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateUnreachable}
	w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateUnreachable}
	g := readGroup(t, w.cl)
	in := w.input(g)
	c := topology.SelectCandidate(in.Sites)
	if !r.Holds() || c.Site == "c" {
		t.Fatalf("the site a failed clone emptied is released by cancelling a second reclone: holds=%v candidate=%q", r.Holds(), c.Site)
	}
}
