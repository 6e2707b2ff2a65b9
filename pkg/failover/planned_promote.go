package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// promoting makes the target the primary with the emergency sequence's
// primitives: it waits (bounded) for the target's sidecar to hold the
// generation naming it, checks that no other site can write and that the
// target still holds the fenced set, drains its relay log, promotes it and
// moves the role labels to it, records the promotion, then points DNS. A
// target that no longer holds the fenced set is rolled back
// (rollbackNamed). Other failures are retried for drainTimeout, then end
// in ExecuteFailed without rollback: the target is already named active,
// and the poll loop's re-assertion or emergency path carries on from there.
func (m *Planned) promoting(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	if p.Group.Status.ActiveSite != b.Target {
		if rollingBack(b.Reason) {
			return m.rollbackNamed(ctx, p, b, b.Reason, b.Message) // the source was named again before a restart
		}
		return m.lagCaughtUp(ctx, p, b)
	}
	if b.TargetGtidAtPromotion == "" {
		if out, done, err := m.promoteTarget(ctx, p, b); !done || err != nil {
			return out, err
		}
	}
	return m.routeTarget(ctx, p, b)
}

// promoteTarget makes the target writable once that is safe; done is true
// when it is writable and its set recorded.
func (m *Planned) promoteTarget(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, bool, error) {
	fenced, err := gtid.ParseSet(b.SourceGtidAtFence)
	if err != nil {
		out, err := m.executeFailed(ctx, p, b, fmt.Sprintf("sourceGtidAtFence does not parse: %v", err))
		return out, false, err
	}
	if to, _ := p.Input.Site(b.Target); to.State == v1alpha1.StateWritable {
		return m.promoted(ctx, p, b, fenced, to.Executed) // promoted before a restart
	}
	if to, _ := p.Input.Site(b.Target); to.Diverged || to.AdminFenced {
		out, err := m.rollbackNamed(ctx, p, b, v1alpha1.ReasonTargetUnhealthy,
			fmt.Sprintf("%s became %s after the request was accepted: it is never made writable", b.Target, unfit(to)))
		return out, false, err
	}
	if why, pause := m.notYet(p, b); why != "" {
		return m.retry(ctx, p, b, pause, why)
	}
	dctx, cancel := context.WithTimeout(ctx, relayDrain+p.Settings.CallTimeout)
	_ = m.env.DB.DrainRelayLog(dctx, b.Target, relayDrain) // bounded, never fatal: the GTID check decides
	cancel()
	cctx, cancel := m.call(ctx, p)
	have, err := m.env.DB.Executed(cctx, b.Target)
	cancel()
	// The promotion decides on this read of the target and on the
	// persisted fence, so the snapshot's age counts from the read's answer:
	// a drain or a slow read must not hold the promotion forever.
	fresh := m.env.Clock.Now()
	switch {
	case err != nil:
		return m.retry(ctx, p, b, retryPause, fmt.Sprintf("reading %s's GTIDs: %v", b.Target, err))
	case !have.Contains(fenced):
		out, err := m.rollbackNamed(ctx, p, b, v1alpha1.ReasonTargetLacksFencedSet, fmt.Sprintf("%s no longer holds %s's fenced set: it lacks %s",
			b.Target, b.SourcePrimary, fenced.Subtract(have)))
		return out, false, err
	case !gtid.Lacks(fenced, have).IsEmpty():
		out, err := m.rollbackNamed(ctx, p, b, v1alpha1.ReasonTargetUnhealthy, fmt.Sprintf("%s holds transactions %s never had: %s",
			b.Target, b.SourcePrimary, gtid.Lacks(fenced, have)))
		return out, false, err
	}
	if err := p.gateFresh(ctx, b.Target, fresh); err != nil {
		return waiting(0, err.Error()), false, nil // the next pass, at once, observes again
	}
	// Claimed (persisted exclusively) before the target can write: no other
	// operator process wrote the group since this pass read it (claim.go).
	c, err := m.claim(ctx, p, b.Target)
	if err != nil {
		return waiting(retryPause, "claiming "+b.Target), false, err
	}
	// Its lease fence armed and its semi-sync source set before it can
	// write (semisync.go); if not, nothing made it writable (claim.go).
	if err := PrepareWritable(ctx, p, m.env.DB, m.env.Notifier, m.env.Clock.Now(), b.Target); err != nil {
		if werr := m.withdraw(ctx, p, c, err); werr != err {
			return waiting(retryPause, "withdrawing the claim on "+b.Target), false, werr
		}
		return m.retry(ctx, p, b, retryPause, err.Error())
	}
	cctx, cancel = m.call(ctx, p)
	// What its reset drops is nothing here: it holds the fenced set, all
	// that its only source wrote (checked above).
	pr, err := m.env.DB.Promote(cctx, b.Target, PromoteOpts(p, b.Target))
	cancel()
	if err != nil {
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventMaybeWritable, MarkMaybeWritable(&p.Group.Status, b.Target, err))
		if perr := m.persist(ctx, p); perr != nil {
			return waiting(retryPause, "recording an unclear promotion"), false, perr
		}
		return m.retry(ctx, p, b, retryPause, fmt.Sprintf("%v %s: %v", ErrPromote, b.Target, err))
	}
	m.labelTarget(ctx, p, b, fresh)
	return m.promoted(ctx, p, b, fenced, pr.Executed)
}

// labelTarget moves the -primary role to the target the moment it is
// writable, before the promotion is recorded: clients wait for one status
// write less. The target is already named active (lagCaughtUp), so the
// Service points only at the one site that may write. It asks the gate
// again first: a process paused during the Promote statement may have lost
// its leadership, and the new leader may have rolled the failover back; its
// record then fails, and it must not have sent the clients to the target.
// A failure changes nothing: routeTarget labels again after the record.
func (m *Planned) labelTarget(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, fresh time.Time) {
	if err := p.gateFresh(ctx, b.Target, fresh); err != nil {
		return
	}
	if r := m.env.Router; r != nil {
		cctx, cancel := m.call(ctx, p)
		_ = r.SetRoleLabels(cctx, p.Group, b.Target) // routeTarget reports a failure
		cancel()
	}
}

// notYet says why the target may not be made writable yet, and how soon to look again.
func (m *Planned) notYet(p Pass, b *v1alpha1.PlannedFailoverStatus) (string, time.Duration) {
	st := &p.Group.Status
	if p.Sidecar != nil && m.inPhase(b) < p.Settings.AdoptionWait {
		if gen, live := p.Sidecar(b.Target); live && gen < st.TopologyGeneration {
			return fmt.Sprintf("%s's sidecar holds generation %d, waiting for %d", b.Target, gen, st.TopologyGeneration),
				adoptionPoll
		}
	}
	for _, s := range p.Input.Sites {
		switch {
		case s.Name != b.Target && s.MaybeWritable && (s.State == v1alpha1.StateReadOnly || !s.FenceConfirmed):
			return fmt.Sprintf("%s may be writable (an operation making it writable had no clear outcome)", s.Name), retryPause
		case s.Name == b.Target || s.State == v1alpha1.StateReadOnly:
		case s.State == v1alpha1.StateWritable:
			return fmt.Sprintf("%s is writable", s.Name), retryPause
		case !s.FenceConfirmed && !HeldReadOnly(st, s.Name):
			return fmt.Sprintf("%s is %s and not confirmed unable to write", s.Name, orUnknown(s.State)), retryPause
		}
	}
	return "", 0
}

// retry waits for the next pass while Promoting's budget (drainTimeout)
// lasts, and ends the request in ExecuteFailed after.
func (m *Planned) retry(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, pause time.Duration,
	why string) (PlannedOutcome, bool, error) {
	if m.inPhase(b) < specOf(p.Group).drainTimeout {
		return waiting(pause, why), false, nil
	}
	out, err := m.executeFailed(ctx, p, b, why)
	return out, false, err
}

func (m *Planned) executeFailed(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, why string) (PlannedOutcome, error) {
	return m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonExecuteFailed,
		msg: fmt.Sprintf("promoting %s failed: %s; %s stays fenced and %s is named active (generation %d): "+
			"no rollback", b.Target, why, b.SourcePrimary, b.Target, p.Group.Status.TopologyGeneration),
		result: PlannedResultFailedOther, event: v1alpha1.EventPlannedFailoverFailed})
}

// promoted records the target's set at promotion and what, of the fenced
// set, it lacks: nothing, since the target was checked to hold it.
func (m *Planned) promoted(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, fenced, set gtid.Set) (PlannedOutcome, bool, error) {
	st := &p.Group.Status
	lost := int64(fenced.Subtract(set).Count())
	b.TargetGtidAtPromotion, b.TransactionsLost = set.String(), &lost
	st.PromotionGtidExecuted, st.PromotionRecorded = set.String(), true
	RecordWritable(st, b.Target)
	b.Message = fmt.Sprintf("%s is writable at %q; moving clients", b.Target, b.TargetGtidAtPromotion)
	if err := m.persist(ctx, p); err != nil {
		return waiting(retryPause, "persisting the promotion"), false, err
	}
	return PlannedOutcome{}, true, nil
}

// routeTarget moves the role labels (the -primary Service) and DNS to the
// target, then enters Resuming. A failed DNS flip is a warning Event, not a
// failure: the Service carries writes while external DNS catches up.
func (m *Planned) routeTarget(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	msg := fmt.Sprintf("%s promoted at %q", b.Target, b.TargetGtidAtPromotion)
	if r := m.env.Router; r != nil {
		cctx, cancel := m.call(ctx, p)
		defer cancel()
		if err := r.SetRoleLabels(cctx, p.Group, b.Target); err != nil {
			return waiting(retryPause, "moving role labels"),
				fmt.Errorf("%w: planned failover: role labels to %s: %w", ErrRoute, b.Target, err)
		}
		if err := pointDNS(cctx, r, m.env.Notifier, p.Group, b.Target); err != nil {
			msg += fmt.Sprintf("; DNS still points elsewhere (%v)", err)
			b.Reason = v1alpha1.ReasonDNSFlipFailed
		}
	}
	return m.advance(ctx, p, b, v1alpha1.PhaseResuming, msg)
}

// retryDNS points DNS at the target of a Succeeded request whose flip
// failed, until it works; the -primary Service already carries the writes.
// It is no topology operation: the pass goes on whatever happens.
func (m *Planned) retryDNS(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) {
	r := m.env.Router
	if r == nil || p.Group.Status.ActiveSite != b.Target {
		return
	}
	cctx, cancel := m.call(ctx, p)
	defer cancel()
	if pointDNS(cctx, r, m.env.Notifier, p.Group, b.Target) != nil {
		return
	}
	b.Reason = ""
	b.Message = fmt.Sprintf("promoted %s; DNS follows it now", b.Target)
	_ = m.persist(ctx, p) // the next pass tries again when this write fails
}

// resuming repoints the other sites at the target (best effort: the poll
// loop keeps them pointed), records the failover in status.lastFailover,
// which starts the shared cooldown, and releases the guard.
func (m *Planned) resuming(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	st := &p.Group.Status
	repointReplicas(ctx, m.env.DB, p, b.Target)
	lost := int64(0)
	if b.TransactionsLost != nil {
		lost = *b.TransactionsLost
	}
	rec := v1alpha1.FailoverRecord{Time: stamp(m.env.Clock.Now()), From: b.SourcePrimary, To: b.Target,
		Kind: v1alpha1.KindPlanned, TransactionsLost: &lost}
	if lost > 0 {
		fenced, _ := gtid.ParseSet(b.SourceGtidAtFence)
		at, _ := gtid.ParseSet(b.TargetGtidAtPromotion)
		rec.LostGtidSet = fenced.Subtract(at).String()
	}
	RecordFailover(st, rec)
	msg := fmt.Sprintf("promoted %s, %d transactions lost", b.Target, lost)
	if b.Reason == v1alpha1.ReasonDNSFlipFailed {
		msg += "; DNS still points elsewhere, retried every pass"
	}
	out, err := m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseSucceeded, reason: b.Reason, msg: msg,
		result: PlannedResultSuccess, event: v1alpha1.EventPlannedFailoverCompleted, zeroLoss: true})
	if err == nil {
		m.env.Notifier.FailoverCompleted(p.Group, v1alpha1.KindPlanned)
	}
	return out, err
}

// rollingBack tells whether a block's reason is a rollback's, set once the
// source was named active again (rollbackNamed resumes it after a restart).
func rollingBack(reason string) bool {
	return reason == v1alpha1.ReasonTargetLacksFencedSet || reason == v1alpha1.ReasonTargetUnhealthy
}

// unfit words why a target may not be made writable any more.
func unfit(s topology.SiteView) string {
	if s.Diverged {
		return "diverged"
	}
	return "fenced by an administrator"
}
