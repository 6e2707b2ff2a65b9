package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneNeverJudgesAnUnobservedSiteOnNothing: c's reclone is in
// PreservingData (not diverged: nothing to save). The operator restarted,
// so it has no last status of c (l.last is memory), and c's mysqld does
// not answer: its view has an empty executed set. dataDurability is
// preferred (no MayAcknowledge). b lags at 0-1:1-8 while a is at
// 0-1:1-10, and c may hold up to 0-1:1-10 (it may have acknowledged 9-10
// under preferred before it went away). c is judged as holding all a
// holds: Cloning waits until b has it.
func TestRecloneNeverJudgesAnUnobservedSiteOnNothing(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryPreservingData)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		r := failover.SiteRecord(st, "c")
		r.DivergentGtid, r.Recovery.DivergentGtid = "", ""
	})
	w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-10"), ServerID: "0-1"}
	w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-8"),
		Replication: topology.Replication{Running: true}}
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable} // nothing known after a restart
	for range 3 {
		w.pass()
	}
	if ph := w.recovery().Phase; ph != v1alpha1.RecoveryPreservingData {
		t.Fatalf("c's data judged on an empty view of an unreachable site: phase %s (%s)", ph, w.recovery().Message)
	}
}
