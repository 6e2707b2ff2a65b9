package sim

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// ModelEmergency is the sim's emergency failover sequence, one persisted step
// per call: Intent (publish a new generation naming the target, so sidecars
// fence by view), Fencing (SQL-fence the old primary until Decide confirms it
// cannot write), Promoting (target's sidecar holds the new view, relay log
// drained or DrainTimeout passed, STOP REPLICA, unfence), Routing, Repointing
// (replicas are repointed by the operator's maintenance), then the history.
type ModelEmergency struct{}

// Step implements EmergencySequencer.
func (ModelEmergency) Step(c *Cycle) {
	st, d := c.Status, c.Decision
	it := st.Intent
	switch {
	case it == nil:
		if startsFailover(d) {
			beginIntent(c, st.ActiveSite, d.Target)
		}
		return
	case retarget(d, it):
		beginIntent(c, it.From, d.Target)
		return
	}
	switch it.Step {
	case v1alpha1.StepFencing:
		fenceOldPrimary(c, it)
	case v1alpha1.StepPromoting:
		promoteTarget(c, it)
	case v1alpha1.StepRouting:
		nextStep(c, it, v1alpha1.StepRepointing)
	case v1alpha1.StepRepointing:
		completeFailover(c, it)
	}
}

// retarget reports whether the failover in flight must move to another target
// (its target became ineligible before it was made writable).
func retarget(d topology.Decision, it *Intent) bool {
	early := it.Step == v1alpha1.StepFencing || it.Step == v1alpha1.StepPromoting
	return early && startsFailover(d) && d.Target != it.To
}

func beginIntent(c *Cycle, from, to string) {
	src, _ := c.Input.Site(from)
	gen := c.Status.publish(to)
	c.Status.Intent = &Intent{From: from, To: to, Generation: gen, Step: v1alpha1.StepFencing,
		StartedAt: c.Now, StepAt: c.Now, SourceExecuted: src.Executed}
	if src.FenceConfirmed {
		c.Status.Intent.ConfirmedBy = "confirmed before the intent"
	}
	c.Logf("emergency: intent %s -> %s published as generation %d", from, to, gen)
}

func nextStep(c *Cycle, it *Intent, step v1alpha1.FailoverStep) {
	it.Step, it.StepAt = step, c.Now
	c.Logf("emergency: %s -> %s step %s", it.From, it.To, step)
}

func fenceOldPrimary(c *Cycle, it *Intent) {
	_ = c.Ops.Fence(it.From) // best effort; the confirmation rule covers it otherwise
	if d := c.Decision; d.Kind == topology.KindFailover && d.Target == it.To {
		nextStep(c, it, v1alpha1.StepPromoting)
	}
}

func promoteTarget(c *Cycle, it *Intent) {
	if d := c.Decision; d.Kind != topology.KindFailover || d.Target != it.To {
		return
	}
	if c.SidecarGeneration(it.To) < it.Generation {
		return
	}
	s, err := c.Ops.Status(it.To)
	if err != nil || (!s.Executed.Contains(s.Received) && c.Now.Before(it.StepAt.Add(c.Settings.DrainTimeout))) {
		return
	}
	if err := c.Ops.StopReplica(it.To); err != nil {
		return
	}
	if err := c.Ops.Unfence(it.To); err != nil {
		c.Logf("emergency: unfence %s: %v", it.To, err)
		return
	}
	c.Status.PromotionExecuted, c.Status.ActiveSourceID = s.Executed, s.ServerUUID
	nextStep(c, it, v1alpha1.StepRouting)
}

func completeFailover(c *Cycle, it *Intent) {
	st := c.Status
	lost := it.SourceExecuted.Subtract(st.PromotionExecuted)
	st.History = append(st.History, topology.FailoverRecord{From: it.From, To: it.To, Generation: it.Generation,
		Time: c.Now, Kind: v1alpha1.KindEmergency})
	st.Intent = nil
	c.Logf("emergency: %s -> %s done (fence confirmed by %s), at least %d transactions lost %s",
		it.From, it.To, it.ConfirmedBy, lost.Count(), lost)
}
