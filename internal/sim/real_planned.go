package sim

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// RealPlanned is a PlannedSequencer that runs pkg/failover's Planned, the
// operator's real planned-failover state machine, through the sim's SiteOps
// and Status. Status.PlannedRequest stands for the annotation and
// Status.Planned mirrors the status block for the model's checks; the
// block's remaining fields (request, lag budget, retryAfter, message) live
// in the glue, written only by PersistStatus, so they are persisted state
// like Status and survive operator restarts.
//
// Runs alternate the cooldown policy by seed (odd cooldowns defer), so both
// reject and defer are exercised.
type RealPlanned struct {
	m    *failover.Planned
	glue *plannedGlue
}

// NewRealPlanned returns a RealPlanned for one run.
func NewRealPlanned() *RealPlanned {
	g := &plannedGlue{emergencyGlue: &emergencyGlue{}}
	return &RealPlanned{glue: g, m: failover.NewPlanned(failover.PlannedEnv{DB: g, Persister: g, Publisher: g,
		Notifier: g, Annotator: g, Clock: g})}
}

// Step implements PlannedSequencer.
func (r *RealPlanned) Step(c *Cycle) {
	r.glue.c = c
	p := failover.Pass{Group: r.glue.group(c), Input: c.Input, Decision: c.Decision,
		Evidence: func(site string) topology.Evidence { return topology.Evidence{Site: site, Active: site} },
		Sidecar:  func(site string) (int64, bool) { return c.SidecarGeneration(site), true },
		Settings: failover.Settings{DrainTimeout: c.Settings.DrainTimeout, AdoptionWait: realAdoptionWait}}
	if _, err := r.m.Step(context.Background(), p); err != nil {
		c.Logf("planned (pkg/failover): %v", err)
	}
}

// Wants implements plannedWanter: the planned failover holds the topology,
// or a request waits to be taken up. A Deferred request that is not due
// leaves the cycle to the rest of the operator.
func (r *RealPlanned) Wants(c *Cycle) bool {
	st, b := c.Status, r.glue.block
	switch {
	case st.Planned.Guard():
		return true
	case st.Intent != nil:
		return false
	case b != nil && b.Phase == v1alpha1.PhaseDeferred:
		due := b.RetryAfter == nil || !c.Now.Before(b.RetryAfter.Time)
		return due || st.PlannedRequest != b.Request
	case b != nil && !b.Phase.Terminal():
		return true
	}
	return st.PlannedRequest != ""
}

// plannedGlue is the planned machine's world in the sim: the emergency
// glue's DB verbs, plus the planned verbs, the annotation and the block.
type plannedGlue struct {
	*emergencyGlue
	block *v1alpha1.PlannedFailoverStatus
}

// group renders the sim's Status, the request and the block as a group.
func (g *plannedGlue) group(c *Cycle) *v1alpha1.MysqlFailoverGroup {
	grp := groupOf(c)
	grp.Spec.FailoverCooldown = metav1.Duration{Duration: c.Settings.Cooldown}
	grp.Spec.PlannedFailover = v1alpha1.PlannedFailoverSpec{MaxLagWait: metav1.Duration{Duration: c.Settings.MaxLagWait},
		DrainTimeout: metav1.Duration{Duration: c.Settings.DrainTimeout}, OnCooldown: v1alpha1.CooldownReject}
	if int64(c.Settings.Cooldown/time.Second)%2 == 1 {
		grp.Spec.PlannedFailover.OnCooldown = v1alpha1.CooldownDefer
	}
	if c.Status.PlannedRequest != "" {
		grp.Annotations = map[string]string{v1alpha1.PlannedFailoverAnnotation: c.Status.PlannedRequest}
	}
	if g.block != nil {
		grp.Status.PlannedFailover = g.block.DeepCopy()
	}
	return grp
}

// PersistStatus implements failover.Persister: the authority, the history
// and the block go to Status (the block also to the glue).
func (g *plannedGlue) PersistStatus(_ context.Context, grp *v1alpha1.MysqlFailoverGroup) error {
	s, st := g.c.Status, &grp.Status
	s.ActiveSite, s.Generation = st.ActiveSite, st.TopologyGeneration
	if p := g.promoted; p != nil {
		s.PromotionExecuted, s.ActiveSourceID = p.Executed, p.ServerUUID
		g.promoted = nil
	}
	b := st.PlannedFailover
	if b == nil {
		return nil
	}
	if old := g.block; old == nil || old.Phase != b.Phase || old.Request != b.Request {
		g.c.Logf("planned: %s -> %s %s %s %s", b.SourcePrimary, b.Target, b.Phase, b.Reason, b.Message)
	}
	if b.Phase == v1alpha1.PhaseSucceeded && b.Reason != v1alpha1.ReasonAlreadyActive &&
		(g.block == nil || g.block.Phase != b.Phase || g.block.Request != b.Request) {
		lf := st.LastFailover
		s.History = append(s.History, topology.FailoverRecord{From: lf.From, To: lf.To, Generation: s.Generation,
			Time: lf.Time.Time, Kind: lf.Kind})
	}
	g.block = b.DeepCopy()
	s.Planned = mirror(b, s.Generation)
	return nil
}

// PersistStatusExclusive implements failover.Persister: the sim's operator
// is the only writer of its Status, so nothing can conflict.
func (g *plannedGlue) PersistStatusExclusive(ctx context.Context, grp *v1alpha1.MysqlFailoverGroup) error {
	return g.PersistStatus(ctx, grp)
}

// mirror is the block as the model's PlannedState.
func mirror(b *v1alpha1.PlannedFailoverStatus, generation int64) *PlannedState {
	p := &PlannedState{Phase: b.Phase, Target: b.Target, Source: b.SourcePrimary, Reason: b.Reason}
	p.SourceAtFence, _ = gtid.ParseSet(b.SourceGtidAtFence)
	if b.StartTime != nil {
		p.StartedAt = b.StartTime.Time
	}
	if b.PhaseStartTime != nil {
		p.PhaseAt = b.PhaseStartTime.Time
	}
	switch b.Phase {
	case v1alpha1.PhasePromoting, v1alpha1.PhaseResuming, v1alpha1.PhaseSucceeded:
		if b.Reason != v1alpha1.ReasonAlreadyActive {
			p.Generation = generation
		}
	}
	return p
}

// ClearPlannedRequest implements failover.Annotator.
func (g *plannedGlue) ClearPlannedRequest(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, value string) error {
	if g.c.Status.PlannedRequest == value {
		g.c.Status.PlannedRequest = ""
	}
	return nil
}

// Unfence implements failover.PlannedDB.
func (g *plannedGlue) Unfence(_ context.Context, site string) error { return g.c.Ops.Unfence(site) }

// KillAppConnections implements failover.PlannedDB: the sim's clients hold
// no connections, so a reachable site is idle at once.
func (g *plannedGlue) KillAppConnections(_ context.Context, site string) (int, error) {
	_, err := g.c.Ops.Status(site)
	return 0, err
}

// WaitForGTID implements failover.PlannedDB without blocking: the machine
// asks again on the next cycle.
func (g *plannedGlue) WaitForGTID(_ context.Context, site string, set gtid.Set, _ time.Duration) error {
	s, err := g.c.Ops.Status(site)
	switch {
	case err != nil:
		return err
	case !s.Executed.Contains(set) && g.c.Break&BreakPlannedLagWait == 0:
		return fmt.Errorf("%s: %w", site, failover.ErrLagPending)
	}
	return nil
}

// Executed implements failover.PlannedDB.
func (g *plannedGlue) Executed(_ context.Context, site string) (gtid.Set, error) {
	s, err := g.c.Ops.Status(site)
	if err != nil {
		return gtid.Set{}, err
	}
	if g.c.Break&BreakPlannedLagWait != 0 {
		return s.Executed.Union(g.c.Status.Planned.SourceAtFence), nil // lies, so the gate passes
	}
	return s.Executed, nil
}

// CheckReplica implements failover.PlannedDB: a replica has a source.
func (g *plannedGlue) CheckReplica(_ context.Context, site string) error {
	s, err := g.c.Ops.Status(site)
	switch {
	case err != nil:
		return err
	case s.Source == "":
		return fmt.Errorf("%s: %w", site, failover.ErrNotReplicating)
	}
	return nil
}

// PlannedFinished implements failover.PlannedNotifier.
func (g *plannedGlue) PlannedFinished(_ *v1alpha1.MysqlFailoverGroup, target, result string, took time.Duration) {
	g.c.Logf("planned: result %s for %s after %s", result, target, took)
}

// PlannedLagWaited implements failover.PlannedNotifier.
func (g *plannedGlue) PlannedLagWaited(*v1alpha1.MysqlFailoverGroup, string, time.Duration) {}

// plannedWanter is a PlannedSequencer that says itself when a cycle is its.
type plannedWanter interface {
	Wants(c *Cycle) bool
}

// plannedWants reports whether this cycle's operation is the planned
// failover's: the sequencer says so when it can, else it holds the
// topology or a request waits and no emergency is in flight.
func (o *operator) plannedWants(c *Cycle) bool {
	if w, ok := o.w.cfg.Planned.(plannedWanter); ok {
		return w.Wants(c)
	}
	return o.st.Planned.Guard() || (o.st.PlannedRequest != "" && o.st.Intent == nil)
}

// ArmLeaseFence implements failover.DB. The model sequencer's passes name
// no sidecar asks (Pass.SidecarAskedAt nil), so it is never called; the
// real operator's runs arm through simInstance.
func (g *plannedGlue) ArmLeaseFence(context.Context, string, time.Duration) error {
	return errModelLeaseFence
}
