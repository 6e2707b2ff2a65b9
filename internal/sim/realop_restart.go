package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// An operator container restarted by its kubelet (a crash, an OOM kill, a
// failed liveness probe) runs in the same Pod: the operator holds its
// election Lease under the Pod's name (cmd/operator, $POD_NAME), so the
// new process finds the Lease held under its own name and takes it back at
// once instead of waiting out the lease. The kubelet has stopped the old
// container before it starts the new one, so the two never run together.
// A Deployment replaced wholesale (operator-down) gets new Pod names and
// waits, as before.

// restartInPods starts every replica afresh under its old identity, all
// standing by: the next step's election gives the Lease back to the
// replica that held it.
func (r *realOperator) restartInPods(now time.Time) {
	r.stop()
	r.clk.SetTime(r.opTime(now))
	for _, p := range r.procs {
		p.startAs(now, p.id)
	}
	r.elect(now)
}

// retake hands the Lease back to a replica restarted in the Pod that holds
// it: the process is new (memory lost), its identity is not.
func (r *realOperator) retake(p *opProc, now time.Time) {
	r.lease.renewedAt, r.lease.renewTime = now, r.clk.Now().Round(0)
	p.lead(now)
	r.w.logf("operator %s leads again: its Lease names its own Pod", p.id)
}

// drawOperatorRestarts adds operator container restarts to s, every 80 to
// 400 steps, each down 1 to 15 steps (the kubelet's back-off), half of
// them mid-pass, right after one of the next 1 to 4 status writes. They are
// drawn after every other fault, from the same generator, so that adding
// the kind left every other fault of every seed as it was.
func drawOperatorRestarts(rng *rand.Rand, c Config, s Schedule) Schedule {
	for at := 40 + rng.IntN(200); at < c.Steps-30; at += 80 + rng.IntN(320) {
		// Half die at a step's start, half right after one of the next
		// few status writes, mid-pass.
		s = append(s, Fault{At: at, Kind: FaultRestartOperator, Site: Primary, Dur: 1 + rng.IntN(15), By: rng.IntN(2) * (1 + rng.IntN(4))})
	}
	slices.SortStableFunc(s, func(a, b Fault) int { return a.At - b.At })
	return s
}

// crashPlan is a container death pending on status writes: the leader's
// container dies right after the writes-th status write from the fault
// lands, mid-pass, with whatever it meant to do next undone. Until the
// step ends, dead makes everything the dying process still sends fail
// (its API writes, its SQL, its routing), as if it never left the host.
type crashPlan struct {
	writes int // status writes left before the death; 0: none pending
	dur    int // steps the container stays down
	dead   bool
	after  string // the write it died after, for the trace
}

// crashAfterWrites arms the death of the leader's container after its
// n-th status write from now.
func (r *realOperator) crashAfterWrites(n, dur int) {
	r.crash = crashPlan{writes: n, dur: max(dur, 1)}
}

// countCrashWrite counts a status write that landed, and kills the
// process when it is the one the plan waits for.
func (r *realOperator) countCrashWrite(o client.Object) {
	if r.crash.writes == 0 || r.crash.dead {
		return
	}
	r.crash.writes--
	if r.crash.writes > 0 {
		return
	}
	r.crash.dead = true
	if g, ok := o.(*v1alpha1.MysqlFailoverGroup); ok {
		r.crash.after = persistedStep(g)
	}
}

// buryCrashed ends the step of a process that died mid-pass: the
// container is down and comes back in its Pod after the plan's steps.
func (r *realOperator) buryCrashed() {
	if !r.crash.dead {
		return
	}
	r.w.logf("operator container died right after a status write (%s)", r.crash.after)
	r.stop()
	r.w.opBackAt, r.w.opSamePod = r.w.step+r.crash.dur, true
	r.crash = crashPlan{}
}

// operatorDead reports whether the operator's process died mid-pass.
func (w *World) operatorDead() bool {
	r, ok := w.op.(*realOperator)
	return ok && r.crash.dead
}

// persistedStep names what a status write persisted: the emergency step
// or the planned phase in flight, or neither.
func persistedStep(g *v1alpha1.MysqlFailoverGroup) string {
	st := &g.Status
	switch {
	case st.Failover != nil:
		return fmt.Sprintf("emergency %s->%s at %s", st.Failover.From, st.Failover.To, st.Failover.Step)
	case st.PlannedFailover != nil && !st.PlannedFailover.Phase.Terminal():
		return fmt.Sprintf("planned to %s at %s", st.PlannedFailover.Target, st.PlannedFailover.Phase)
	}
	return fmt.Sprintf("generation %d, active %s", st.TopologyGeneration, st.ActiveSite)
}
