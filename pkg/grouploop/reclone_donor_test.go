package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneRechecksItsDonorBeforeCloning: c's reclone (c healthy, not
// diverged: confirm form) was accepted with donor b. b then goes down.
// Asked to clone from b, c's sidecar would empty c's datadir and then fail
// to fetch: the reclone would fail in Cloning with c held and empty. The
// donor is judged again before Cloning is persisted: the writing primary
// a, the only fit site left, donates instead.
func TestRecloneRechecksItsDonorBeforeCloning(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryPreservingData)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		r := failover.SiteRecord(st, "c")
		r.DivergentGtid, r.Recovery.DivergentGtid, r.Recovery.Request = "", "", "c:confirm=orders"
	})
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
		Replication: topology.Replication{Running: true}}
	w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateUnreachable} // the donor is gone
	for range 6 {                                                                 // the sidecar's PreservingData, then c's stop observed
		w.pass()
	}
	for _, d := range w.rec.donors {
		if d == "b" {
			t.Fatalf("c asked to clone from donor b, which is down; phase %s", w.recovery().Phase)
		}
	}
	if r := w.recovery(); r.Donor != "a" || len(w.rec.donors) == 0 {
		t.Fatalf("donor %q, cloning asks %v: want the clone taken from a", r.Donor, w.rec.donors)
	}
}
