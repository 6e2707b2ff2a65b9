package failover

import (
	"context"
	"errors"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// draining runs the two steps of Draining: fence the source and record its
// GTID set, then kill its application connections until none are left or
// drainTimeout runs out. The first round of kills follows the recorded
// fence in the same pass; later rounds, one per pass.
func (m *Planned) draining(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	if b.SourceGtidAtFence == "" {
		return m.fenceSource(ctx, p, b)
	}
	return m.drainClients(ctx, p, b)
}

// fenceSource takes the source out of the -primary Service, fences it and
// records its executed set, which can no longer grow. A source with an
// empty set has nothing to lose and no writes to drain: it goes straight on.
// A fence that keeps failing past drainTimeout is undone.
func (m *Planned) fenceSource(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	src := b.SourcePrimary
	if crashed(p, src) {
		return m.sourceCrashed(ctx, p, b, "before it was fenced")
	}
	set, err := m.applyFence(ctx, p, src)
	if err != nil {
		if m.inPhase(b) < specOf(p.Group).drainTimeout {
			return waiting(retryPause, "fencing "+src), err
		}
		return m.rollback(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonSourceFenceFailed,
			msg:    fmt.Sprintf("%s could not be fenced within drainTimeout: %v", src, err),
			result: PlannedResultFailedOther, event: v1alpha1.EventPlannedFailoverFailed})
	}
	b.SourceGtidAtFence = set.String()
	m.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventPlannedFailoverDraining,
		fmt.Sprintf("%s fenced at %q; draining its clients before %s takes over", src, b.SourceGtidAtFence, b.Target))
	if set.IsEmpty() {
		return m.advance(ctx, p, b, v1alpha1.PhaseWaitingForLag,
			fmt.Sprintf("%s fenced with no transactions: nothing to drain or wait for", src))
	}
	b.Message = fmt.Sprintf("%s fenced; killing its application connections", src)
	if err := m.persist(ctx, p); err != nil {
		return waiting(retryPause, "persisting the fence"), err
	}
	// The fence is recorded. The first round of kills needs no new
	// observation (it asks the source itself), so it runs now rather than
	// a pass later: every pass here is time without a writable primary.
	return m.drainClients(ctx, p, b)
}

// applyFence strips the primary role label, fences src by SQL and reads its
// executed set. Every part is safe to repeat.
func (m *Planned) applyFence(ctx context.Context, p Pass, src string) (gtid.Set, error) {
	cctx, cancel := m.call(ctx, p)
	defer cancel()
	if r := m.env.Router; r != nil {
		if err := r.SetRoleLabels(cctx, p.Group, ""); err != nil {
			return gtid.Set{}, fmt.Errorf("%w: strip the primary role label: %w", ErrRoute, err)
		}
	}
	if err := m.env.DB.Fence(cctx, src); err != nil {
		return gtid.Set{}, fmt.Errorf("planned failover: fence %s: %w", src, err)
	}
	RecordFenced(&p.Group.Status, src)
	set, err := m.env.DB.Executed(cctx, src)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("planned failover: read %s's GTIDs after its fence: %w", src, err)
	}
	return set, nil
}

// drainClients kills the fenced source's application connections; the
// request moves on when a round finds none, or when its budget ran out
// (spec.instance.switchoverDelay when set, else drainTimeout; clients still
// connected get read-only errors on their next write).
func (m *Planned) drainClients(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	src := b.SourcePrimary
	if crashed(p, src) {
		return m.sourceCrashed(ctx, p, b, "while it was being drained")
	}
	cctx, cancel := m.call(ctx, p)
	n, err := m.env.DB.KillAppConnections(cctx, src)
	cancel()
	budget, what := specOf(p.Group).drainBudget, "drainTimeout"
	if p.Group.Spec.Instance.SwitchoverDelay != nil {
		what = "switchoverDelay"
	}
	switch {
	case err == nil && n == 0:
		return m.advance(ctx, p, b, v1alpha1.PhaseWaitingForLag,
			fmt.Sprintf("%s drained; waiting for %s to apply %q", src, b.Target, b.SourceGtidAtFence))
	case m.inPhase(b) >= budget:
		left := fmt.Sprintf("%d application connections were still being killed", n)
		if err != nil {
			left = "killing application connections failed: " + err.Error()
		}
		return m.advance(ctx, p, b, v1alpha1.PhaseWaitingForLag,
			fmt.Sprintf("%s %s elapsed (%s); waiting for %s anyway", what, budget, left, b.Target))
	case err != nil:
		return waiting(retryPause, "killing application connections"), fmt.Errorf("planned failover: drain %s: %w", src, err)
	}
	return waiting(retryPause, fmt.Sprintf("killed %d application connections on %s", n, src)), nil
}

// waitingForLag waits, a slice per pass, until the target's executed set
// holds the fenced source's. Past the lag budget the request is rolled back.
func (m *Planned) waitingForLag(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	fenced, err := gtid.ParseSet(b.SourceGtidAtFence)
	if err != nil {
		return m.rollback(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonExecuteFailed,
			msg: fmt.Sprintf("sourceGtidAtFence does not parse: %v", err), result: PlannedResultFailedOther,
			event: v1alpha1.EventPlannedFailoverFailed})
	}
	budget := maxLagWait(p.Group, b)
	left := budget - m.inPhase(b)
	if left <= 0 {
		m.env.Notifier.PlannedLagWaited(p.Group, b.Target, m.inPhase(b))
		return m.rollback(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonLagTimeout,
			msg:    fmt.Sprintf("%s did not apply %s's fenced GTID set within maxLagWait %s", b.Target, b.SourcePrimary, budget),
			result: PlannedResultFailedTimeout, event: v1alpha1.EventPlannedFailoverFailed})
	}
	if !fenced.IsEmpty() {
		cctx, cancel := context.WithTimeout(ctx, min(left, lagSlice)+p.Settings.CallTimeout)
		err = m.env.DB.WaitForGTID(cctx, b.Target, fenced, min(left, lagSlice))
		cancel()
		switch {
		case errors.Is(err, ErrLagPending):
			return waiting(0, fmt.Sprintf("%s has not applied %q yet", b.Target, b.SourceGtidAtFence)), nil
		case err != nil:
			return waiting(lagSlice, fmt.Sprintf("waiting for %s: %v", b.Target, err)), nil
		}
	}
	m.env.Notifier.PlannedLagWaited(p.Group, b.Target, m.inPhase(b))
	return m.lagDone(ctx, p, b)
}

// lagCaughtUp names the target active in a new generation and enters
// Promoting, in one write: sidecars learn the new view while the target is
// still read-only, and the source (already fenced) would fence by view.
// The same write puts the source's fenced set, which the target holds, in
// the history's base (topology.NamedActiveBase): once the source is no
// longer named, its writes are no writer's, and a promotion that fails
// from here on leaves the target named active without a record.
func (m *Planned) lagCaughtUp(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	st := &p.Group.Status
	if st.ActiveSite != b.Target {
		st.TopologyGeneration++
		st.ActiveSite = b.Target
		if fenced, err := gtid.ParseSet(b.SourceGtidAtFence); err == nil && !fenced.IsEmpty() {
			base := topology.NamedActiveBase(Promoted(st), fenced)
			st.PromotionGtidExecuted, st.PromotionRecorded = base.String(), true
		}
	}
	msg := fmt.Sprintf("%s holds %s's fenced set; generation %d names it active", b.Target, b.SourcePrimary,
		st.TopologyGeneration)
	out, err := m.advance(ctx, p, b, v1alpha1.PhasePromoting, msg)
	if err != nil {
		return out, err
	}
	m.env.Publisher.Publish(p.Group)
	m.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventPlannedFailoverLagOK, msg)
	return out, nil
}
