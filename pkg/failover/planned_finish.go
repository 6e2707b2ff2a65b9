package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ending is how a request ends.
type ending struct {
	phase  v1alpha1.PlannedFailoverPhase
	reason string
	msg    string
	// result is the metric's result label; "" is not counted (a skipped request).
	result string
	// event is the Event's reason, a v1alpha1.EventPlannedFailover* constant.
	event string
	// retryAfter, when set, is published with a CooldownActive rejection.
	retryAfter time.Time
	// zeroLoss records transactionsLost: 0 when nothing recorded it yet.
	zeroLoss bool
}

// finish ends the request. The annotation is removed first and the terminal
// phase persisted after, so a terminal block next to the annotation always
// means a new request, even one with the same value; a crash in between
// leaves the phase in flight, which the next pass ends again.
func (m *Planned) finish(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, e ending) (PlannedOutcome, error) {
	g := p.Group
	if a := m.env.Annotator; a != nil {
		cctx, cancel := m.call(ctx, p)
		err := a.ClearPlannedRequest(cctx, g, b.Request)
		cancel()
		if err != nil {
			return waiting(retryPause, "removing the annotation"), fmt.Errorf("planned failover: remove the annotation: %w", err)
		}
	}
	took := m.took(b)
	if e.phase == v1alpha1.PhaseSucceeded && e.reason == "" && b.Reason == v1alpha1.ReasonDragonflyPromoFailed {
		e.reason = b.Reason // MySQL succeeded; the cache's failure stays on record
	}
	m.enter(b, e.phase, e.msg)
	b.Reason, b.RetryAfter = e.reason, nil
	done := *b.PhaseStartTime
	b.CompletionTime = &done
	if b.StartTime != nil {
		b.DurationSeconds = int64(done.Sub(b.StartTime.Time) / time.Second)
	}
	if !e.retryAfter.IsZero() {
		at := metav1.NewTime(e.retryAfter)
		b.RetryAfter = &at
	}
	if e.zeroLoss && b.TransactionsLost == nil {
		zero := int64(0)
		b.TransactionsLost = &zero
	}
	if err := m.persist(ctx, p); err != nil {
		return waiting(retryPause, "persisting the end"), err
	}
	eventType := EventNormal
	if e.phase == v1alpha1.PhaseFailed {
		eventType = EventWarning
	}
	m.env.Notifier.Event(g, eventType, e.event, fmt.Sprintf("%s -> %s %s: %s", orNone(b.SourcePrimary),
		orNone(b.Target), e.phase, describe(e)))
	if e.result != "" {
		m.env.Notifier.PlannedFinished(g, metricSite(g, b.Target), e.result, took)
	}
	return PlannedOutcome{Acted: true, Next: -1}, nil
}

func describe(e ending) string {
	if e.reason == "" {
		return e.msg
	}
	return e.reason + ": " + e.msg
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// metricSite is the target as a metric label: "" unless it is a site of the
// group, so that bad requests cannot mint label values.
func metricSite(g *v1alpha1.MysqlFailoverGroup, target string) string {
	if _, ok := siteSpec(g, target); ok {
		return target
	}
	return ""
}

// rollback undoes the fence before ending the request: the source is
// unfenced (only the operator may) and labelled primary again; DNS never
// moved. It serves requests whose target was never named active. A source
// that went away stays fenced, and the emergency path takes over.
func (m *Planned) rollback(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, e ending) (PlannedOutcome, error) {
	src, st := b.SourcePrimary, &p.Group.Status
	if st.ActiveSite != src {
		return m.finish(ctx, p, b, e)
	}
	if err := p.gate(ctx, src); err != nil {
		return waiting(0, err.Error()), nil // the next pass, at once, observes again
	}
	// Claimed (persisted exclusively) before the source can write again
	// (claim.go).
	c, err := m.claim(ctx, p, src)
	if err != nil {
		return waiting(retryPause, "rolling back"), err
	}
	// The target acknowledges the source's commits again before they can
	// start: a promotion that failed may have made it the semi-sync source.
	if !crashed(p, b.Target) {
		PrepareReplica(ctx, p, m.env.DB, b.Target, src)
	}
	err, perr := m.unfenceSource(ctx, p, src, c)
	if perr != nil {
		return waiting(retryPause, "rolling back"), perr
	}
	switch {
	// On an error the mark stays cleared: an unfence that timed out may still
	// have taken effect, and only a confirmed read-only site may count as held.
	case err != nil && !crashed(p, src):
		return waiting(retryPause, "unfencing "+src), fmt.Errorf("planned failover: roll back: unfence %s: %w", src, err)
	case err != nil:
		e.msg += fmt.Sprintf("; %s is unreachable and stays fenced: the emergency path takes over", src)
	default:
		RecordWritable(st, src)
		e.msg += fmt.Sprintf("; rolled back: %s is writable again", src)
	}
	if r := m.env.Router; r != nil {
		cctx, cancel := m.call(ctx, p)
		err := r.SetRoleLabels(cctx, p.Group, src)
		cancel()
		if err != nil {
			return waiting(retryPause, "restoring role labels"),
				fmt.Errorf("%w: planned failover: restore role labels on %s: %w", ErrRoute, src, err)
		}
	}
	return m.finish(ctx, p, b, e)
}

// unfenceSource arms the source's lease fence and sets its semi-sync
// source part (PrepareWritable), and unfences it: err is why it is not
// known writable, perr a failure to record an unfence that failed and may
// have taken effect. A source that cannot be prepared is not unfenced, as
// if the unfence had failed, and claim c is withdrawn (claim.go).
func (m *Planned) unfenceSource(ctx context.Context, p Pass, src string, c Claimed) (err, perr error) {
	if err := PrepareWritable(ctx, p, m.env.DB, m.env.Notifier, m.env.Clock.Now(), src); err != nil {
		if werr := m.withdraw(ctx, p, c, err); werr != err {
			return err, werr
		}
		return err, nil
	}
	cctx, cancel := m.call(ctx, p)
	err = m.env.DB.Unfence(cctx, src)
	cancel()
	if errors.Is(err, ErrUnfenceRefused) {
		// Refused before any change: src stayed read-only.
		if werr := m.withdraw(ctx, p, c, err); werr != err {
			return err, werr
		}
		return err, nil
	}
	if err != nil {
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventMaybeWritable, MarkMaybeWritable(&p.Group.Status, src, err))
		perr = m.persist(ctx, p)
	}
	return err, perr
}

// crashed reports whether this pass saw site unreachable.
func crashed(p Pass, site string) bool {
	s, ok := p.Input.Site(site)
	return ok && s.State == v1alpha1.StateUnreachable
}

// sourceCrashed ends a request whose source went away while it was being
// drained: no rollback is possible, and with the guard released the
// emergency path takes over.
func (m *Planned) sourceCrashed(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, when string) (PlannedOutcome, error) {
	return m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonSourceCrashed,
		msg:    fmt.Sprintf("source %s became unreachable %s; handed off to the emergency failover path", b.SourcePrimary, when),
		result: PlannedResultFailedOther, event: v1alpha1.EventPlannedFailoverFailed})
}
