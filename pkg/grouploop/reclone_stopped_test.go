package grouploop

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// stoppedWorld is a running reclone of c in PreservingData, c not
// diverged, with b and c both replicating a at 0-1:1-8 and acknowledging
// (dataDurability required).
func stoppedWorld(t *testing.T) *recloneWorld {
	w := runningWorld(t, v1alpha1.RecoveryPreservingData)
	w.rec.after = 1 // the sidecar's PreservingData is done at once
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		r := failover.SiteRecord(st, "c")
		r.DivergentGtid, r.Recovery.DivergentGtid = "", ""
	})
	rep := topology.Replication{Running: true}
	w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-10"), ServerID: "0-1"}
	w.views["b"] = topology.SiteView{Name: "b", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-8"), Replication: rep, MayAcknowledge: true}
	w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-8"), Replication: rep, MayAcknowledge: true}
	return w
}

// TestRecloneJudgesOnlyAStoppedObservation: pass 1 stops c's replication.
// Between the passes c's mysqld restarts, which starts replication again
// (no skip_slave_start). Pass 2's observation shows c replicating at 1-8;
// c then acknowledges 9-10 before pass 2's stop lands. Judging that
// observation would persist Cloning while c alone holds 9-10 (b has 1-8):
// if a then dies, b is promoted and c emptied, and 9-10 are lost. Only an
// observation showing c's replication stopped is judged, and the wait
// starts over from there.
func TestRecloneJudgesOnlyAStoppedObservation(t *testing.T) {
	w := stoppedWorld(t)
	w.pass() // stops c's replication; waits a pass
	if ph := w.recovery().Phase; ph != v1alpha1.RecoveryPreservingData {
		t.Fatalf("pass 1: phase %s", ph)
	}
	c := w.views["c"]
	c.Replication.Running = true // c's mysqld restarted between the passes
	w.views["c"] = c
	g := readGroup(t, w.cl)
	w.l.patcher.reset(g)
	in := w.input(g) // observed now: c at 1-8, replicating
	d, err := topology.Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	c = w.views["c"]
	c.Executed = mustSet(t, "0-1:1-10") // acknowledged after the observation, before the stop
	w.views["c"] = c
	w.l.reclone(t.Context(), failover.Pass{Group: g, Input: in, Decision: d})
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryPreservingData {
		t.Fatalf("%s persisted on an observation of c taken while it replicated (c holds %s, b %s): %s",
			r.Phase, w.views["c"].Executed, w.views["b"].Executed, r.Message)
	}
	w.pass() // observed stopped at 1-10: the wait starts over
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryPreservingData {
		t.Fatalf("judged on the first observation after a running one: %s: %s", r.Phase, r.Message)
	}
	w.pass() // observed stopped again: judged, and b lacks 9-10
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryPreservingData {
		t.Fatalf("c holds 9-10 that b lacks, yet %s: %s", r.Phase, r.Message)
	}
	b := w.views["b"]
	b.Executed = mustSet(t, "0-1:1-10")
	w.views["b"] = b
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryCloning {
		t.Fatalf("b holds all c holds and c's stop was observed: %s: %s", r.Phase, r.Message)
	}
}

// TestRecloneJudgesAfterARestartOnItsOwnStop: the operator restarts
// (recloneStopped, in memory, is lost) with c observed stopped. The new
// process judges only after a stop of its own and the observation after
// it, never on a reading it cannot tie to a stop.
func TestRecloneJudgesAfterARestartOnItsOwnStop(t *testing.T) {
	w := stoppedWorld(t)
	b := w.views["b"]
	b.Executed = mustSet(t, "0-1:1-10")
	w.views["b"] = b
	w.pass() // stops c's replication; waits a pass
	w.l = w.loop()
	stops := w.stops
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryPreservingData || w.stops != stops+1 {
		t.Fatalf("restarted operator: phase %s after %d stops of its own: %s", r.Phase, w.stops-stops, r.Message)
	}
	w.pass()
	if r := w.recovery(); r.Phase != v1alpha1.RecoveryCloning {
		t.Fatalf("phase %s: %s", r.Phase, r.Message)
	}
}
