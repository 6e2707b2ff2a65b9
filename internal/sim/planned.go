package sim

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// ModelPlanned is the sim's planned failover, one persisted phase per call:
// Validating, Draining (SQL-fence the source, record its GTID set),
// WaitingForLag (until the target contains that set, else roll back after
// MaxLagWait), Promoting (publish a generation naming the target, then unfence
// it once its sidecar holds it), Resuming (history), Succeeded or Failed.
type ModelPlanned struct{}

// Step implements PlannedSequencer.
func (ModelPlanned) Step(c *Cycle) {
	p := c.Status.Planned
	if !p.Guard() {
		startPlanned(c)
		return
	}
	switch p.Phase {
	case v1alpha1.PhaseDraining:
		drainSource(c, p)
	case v1alpha1.PhaseWaitingForLag:
		waitForLag(c, p)
	case v1alpha1.PhasePromoting:
		promotePlanned(c, p)
	case v1alpha1.PhaseResuming:
		c.Status.History = append(c.Status.History, topology.FailoverRecord{From: p.Source, To: p.Target,
			Generation: p.Generation, Time: c.Now, Kind: v1alpha1.KindPlanned})
		finishPlanned(c, p, v1alpha1.PhaseSucceeded, "")
	}
}

func startPlanned(c *Cycle) {
	st := c.Status
	p := &PlannedState{Phase: v1alpha1.PhaseValidating, Target: st.PlannedRequest, Source: st.ActiveSite,
		StartedAt: c.Now, PhaseAt: c.Now}
	st.Planned, st.PlannedRequest = p, ""
	c.Logf("planned: %s -> %s requested", p.Source, p.Target)
	switch reason := validatePlanned(c, p); reason {
	case "":
		setPhase(c, p, v1alpha1.PhaseDraining)
	case v1alpha1.ReasonAlreadyActive:
		finishPlanned(c, p, v1alpha1.PhaseSucceeded, reason)
	default:
		finishPlanned(c, p, v1alpha1.PhaseFailed, reason)
	}
}

func validatePlanned(c *Cycle, p *PlannedState) string {
	t, ok := c.Input.Site(p.Target)
	src, _ := c.Input.Site(p.Source)
	last := c.Input.LastFailover()
	switch {
	case !ok:
		return v1alpha1.ReasonUnknownSite
	case p.Target == p.Source:
		return v1alpha1.ReasonAlreadyActive
	case c.Status.Intent != nil:
		return v1alpha1.ReasonConcurrentOperation
	case last != nil && c.Now.Before(last.Time.Add(c.Settings.Cooldown)):
		return v1alpha1.ReasonCooldownActive
	case src.State != v1alpha1.StateWritable:
		return v1alpha1.ReasonSourceCrashed
	case !topology.Eligible(t) || !t.Replication.Running:
		return v1alpha1.ReasonTargetUnhealthy
	}
	return ""
}

func setPhase(c *Cycle, p *PlannedState, ph v1alpha1.PlannedFailoverPhase) {
	p.Phase, p.PhaseAt = ph, c.Now
	c.Logf("planned: %s -> %s phase %s", p.Source, p.Target, ph)
}

func finishPlanned(c *Cycle, p *PlannedState, ph v1alpha1.PlannedFailoverPhase, reason string) {
	p.Phase, p.PhaseAt, p.Reason = ph, c.Now, reason
	c.Logf("planned: %s -> %s %s %s", p.Source, p.Target, ph, reason)
}

func drainSource(c *Cycle, p *PlannedState) {
	if err := c.Ops.Fence(p.Source); err != nil {
		finishPlanned(c, p, v1alpha1.PhaseFailed, v1alpha1.ReasonSourceCrashed)
		return
	}
	s, err := c.Ops.Status(p.Source)
	if err != nil {
		finishPlanned(c, p, v1alpha1.PhaseFailed, v1alpha1.ReasonSourceCrashed)
		return
	}
	p.SourceAtFence = s.Executed
	setPhase(c, p, v1alpha1.PhaseWaitingForLag)
}

func waitForLag(c *Cycle, p *PlannedState) {
	s, err := c.Ops.Status(p.Target)
	if err == nil && (s.Executed.Contains(p.SourceAtFence) || c.Break&BreakPlannedLagWait != 0) {
		setPhase(c, p, v1alpha1.PhasePromoting)
		return
	}
	if c.Now.Sub(p.PhaseAt) <= c.Settings.MaxLagWait {
		return
	}
	if err := c.Ops.Unfence(p.Source); err != nil {
		c.Logf("planned: rollback of %s: %v", p.Source, err)
	}
	finishPlanned(c, p, v1alpha1.PhaseFailed, v1alpha1.ReasonLagTimeout)
}

func promotePlanned(c *Cycle, p *PlannedState) {
	if p.Generation == 0 {
		p.Generation = c.Status.publish(p.Target)
		c.Logf("planned: generation %d names %s", p.Generation, p.Target)
		return
	}
	if ok := tryPromotePlanned(c, p); !ok && c.Now.Sub(p.PhaseAt) > c.Settings.MaxLagWait {
		finishPlanned(c, p, v1alpha1.PhaseFailed, v1alpha1.ReasonExecuteFailed)
	}
}

func tryPromotePlanned(c *Cycle, p *PlannedState) bool {
	if c.SidecarGeneration(p.Target) < p.Generation {
		return false
	}
	s, err := c.Ops.Status(p.Target)
	if err != nil || (!s.Executed.Contains(p.SourceAtFence) && c.Break&BreakPlannedLagWait == 0) {
		return false
	}
	if c.Ops.StopReplica(p.Target) != nil || c.Ops.Unfence(p.Target) != nil {
		return false
	}
	c.Status.PromotionExecuted, c.Status.ActiveSourceID = s.Executed, s.ServerUUID
	setPhase(c, p, v1alpha1.PhaseResuming)
	return true
}
