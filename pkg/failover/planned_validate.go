package failover

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Defaults of spec.plannedFailover, for groups that did not pass through the
// API server's defaulting (tests, the simulation).
const (
	DefaultMaxLagWait   = 5 * time.Minute
	DefaultDrainTimeout = 30 * time.Second
)

// plannedSpec is spec.plannedFailover and the cooldown, defaulted.
type plannedSpec struct {
	maxLagWait   time.Duration
	drainTimeout time.Duration
	// drainBudget bounds the drain of the fenced old primary's clients:
	// spec.instance.switchoverDelay when set, else drainTimeout.
	drainBudget time.Duration
	onCooldown  v1alpha1.CooldownPolicy
	cooldown    time.Duration
}

func specOf(g *v1alpha1.MysqlFailoverGroup) plannedSpec {
	s := plannedSpec{maxLagWait: g.Spec.PlannedFailover.MaxLagWait.Duration,
		drainTimeout: g.Spec.PlannedFailover.DrainTimeout.Duration,
		onCooldown:   g.Spec.PlannedFailover.OnCooldown, cooldown: g.Spec.FailoverCooldown.Duration}
	if s.maxLagWait <= 0 {
		s.maxLagWait = DefaultMaxLagWait
	}
	if s.drainTimeout <= 0 {
		s.drainTimeout = DefaultDrainTimeout
	}
	s.drainBudget = s.drainTimeout
	if d := g.Spec.Instance.SwitchoverDelay; d != nil && d.Duration > 0 {
		s.drainBudget = d.Duration
	}
	if s.onCooldown != v1alpha1.CooldownDefer {
		s.onCooldown = v1alpha1.CooldownReject
	}
	return s
}

// maxLagWait is the request's lag budget: its own, else the spec's.
func maxLagWait(g *v1alpha1.MysqlFailoverGroup, b *v1alpha1.PlannedFailoverStatus) time.Duration {
	if b.MaxLagWait != nil && b.MaxLagWait.Duration > 0 {
		return b.MaxLagWait.Duration
	}
	return specOf(g).maxLagWait
}

// pending parses the request: a bad value ends the request, a good one
// names the target and the lag budget in force.
func (m *Planned) pending(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	req, err := ParsePlannedRequest(b.Request)
	if err != nil {
		return m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonInvalidRequest,
			msg: err.Error(), result: PlannedResultRejected, event: v1alpha1.EventPlannedFailoverRejected})
	}
	b.Target = req.Target
	lag := req.MaxLagWait
	if lag <= 0 {
		lag = specOf(p.Group).maxLagWait
	}
	b.MaxLagWait = &metav1.Duration{Duration: lag}
	return m.advance(ctx, p, b, v1alpha1.PhaseValidating,
		fmt.Sprintf("validating a switchover from %s to %s (maxLagWait %s)", b.SourcePrimary, b.Target, lag))
}

// verdict is what validation found: an empty reason lets the request on.
type verdict struct {
	reason string
	msg    string
	// retryAfter is when the cooldown ends, for CooldownActive.
	retryAfter time.Time
}

// validating checks the request against the group as this pass saw it and
// moves to Draining, or ends it (rejected, or skipped when the target is
// already active), or defers it while the cooldown runs.
func (m *Planned) validating(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	now := m.env.Clock.Now()
	b.SourcePrimary = p.Group.Status.ActiveSite
	v := validate(p, b, now)
	if v.reason == "" {
		v = m.checkReplica(ctx, p, b)
	}
	switch {
	case v.reason == "":
		b.Reason, b.RetryAfter = "", nil
		return m.advance(ctx, p, b, v1alpha1.PhaseDraining,
			fmt.Sprintf("fencing %s and draining its clients", b.SourcePrimary))
	case v.reason == v1alpha1.ReasonAlreadyActive:
		return m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseSucceeded, reason: v.reason, msg: v.msg,
			event: v1alpha1.EventPlannedFailoverSkipped, zeroLoss: true})
	case v.reason == v1alpha1.ReasonCooldownActive && specOf(p.Group).onCooldown == v1alpha1.CooldownDefer:
		return m.deferUntil(ctx, p, b, v)
	}
	e := ending{phase: v1alpha1.PhaseFailed, reason: v.reason, msg: v.msg + "; no fence was applied",
		result: PlannedResultRejected, event: v1alpha1.EventPlannedFailoverRejected}
	if !v.retryAfter.IsZero() {
		e.retryAfter = v.retryAfter
	}
	return m.finish(ctx, p, b, e)
}

// validate is the pure check of a request, in the order a person would
// want to hear about problems.
func validate(p Pass, b *v1alpha1.PlannedFailoverStatus, now time.Time) verdict {
	g, st := p.Group, &p.Group.Status
	spec, known := siteSpec(g, b.Target)
	switch {
	case !known:
		return verdict{reason: v1alpha1.ReasonUnknownSite, msg: fmt.Sprintf("%s is not a site of the group", b.Target)}
	case st.ActiveSite == b.Target:
		return verdict{reason: v1alpha1.ReasonAlreadyActive, msg: fmt.Sprintf("%s is already the active site; nothing to do", b.Target)}
	case spec.Role != "" && spec.Role != v1alpha1.RolePrimaryCandidate:
		return verdict{reason: v1alpha1.ReasonTargetUnhealthy,
			msg: fmt.Sprintf("%s is %s: only primary-candidate sites are promoted", b.Target, spec.Role)}
	case st.Failover != nil:
		return verdict{reason: v1alpha1.ReasonConcurrentOperation,
			msg: fmt.Sprintf("an emergency failover %s -> %s is in flight", st.Failover.From, st.Failover.To)}
	case recloning(st) != "":
		return verdict{reason: v1alpha1.ReasonConcurrentOperation,
			msg: fmt.Sprintf("the reclone of %s is in progress; ask again once it ends", recloning(st))}
	}
	if v, refused := updateVerdict(g, b, now); refused {
		return v
	}
	if last := st.LastFailover; last != nil {
		if end := last.Time.Add(specOf(g).cooldown); now.Before(end) {
			return verdict{reason: v1alpha1.ReasonCooldownActive, retryAfter: end,
				msg: fmt.Sprintf("the last failover (%s -> %s) was at %s: cooldown active, retry after %s",
					last.From, last.To, last.Time.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))}
		}
	}
	return validateSites(p, b)
}

// validateSites checks that the source can be fenced and the target can catch up.
func validateSites(p Pass, b *v1alpha1.PlannedFailoverStatus) verdict {
	if b.SourcePrimary == "" {
		return verdict{reason: v1alpha1.ReasonNoPrimary, msg: "the group has no active site yet"}
	}
	src, _ := p.Input.Site(b.SourcePrimary)
	if src.State != v1alpha1.StateWritable && src.State != v1alpha1.StateReadOnly {
		return verdict{reason: v1alpha1.ReasonSourceCrashed,
			msg: fmt.Sprintf("source %s is %s: the emergency path handles it", b.SourcePrimary, orUnknown(src.State))}
	}
	t, _ := p.Input.Site(b.Target)
	why := ""
	switch {
	case t.State != v1alpha1.StateReadOnly:
		why = fmt.Sprintf("is %s, not a read-only replica", orUnknown(t.State))
	case t.Diverged:
		why = "holds transactions the active site never saw"
	case t.AdminFenced:
		why = "is fenced by an administrator"
	case t.Replication.Error != "":
		why = "has broken replication: " + t.Replication.Error
	}
	if why != "" {
		return verdict{reason: v1alpha1.ReasonTargetUnhealthy, msg: fmt.Sprintf("target %s %s", b.Target, why)}
	}
	return verdict{}
}

// checkReplica asks the target itself whether it replicates: the pass's
// view cannot tell a paused SQL thread (lag, for WaitingForLag) from
// replication that is not there.
func (m *Planned) checkReplica(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) verdict {
	cctx, cancel := m.call(ctx, p)
	defer cancel()
	if err := m.env.DB.CheckReplica(cctx, b.Target); err != nil {
		return verdict{reason: v1alpha1.ReasonTargetUnhealthy, msg: fmt.Sprintf("target %s: %v", b.Target, err)}
	}
	return verdict{}
}

func orUnknown(s v1alpha1.SiteState) v1alpha1.SiteState {
	if s == "" {
		return v1alpha1.StateUnknown
	}
	return s
}

func siteSpec(g *v1alpha1.MysqlFailoverGroup, name string) (v1alpha1.Site, bool) {
	for _, s := range g.Spec.Sites {
		if s.Name == name {
			return s, true
		}
	}
	return v1alpha1.Site{}, false
}

// deferUntil parks the request until the cooldown ends; the annotation stays.
func (m *Planned) deferUntil(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, v verdict) (PlannedOutcome, error) {
	at := metav1.NewTime(v.retryAfter)
	b.Reason, b.RetryAfter = v1alpha1.ReasonCooldownActive, &at
	msg := v.msg + "; deferred (onCooldown: defer)"
	out, err := m.advance(ctx, p, b, v1alpha1.PhaseDeferred, msg)
	if err != nil {
		return out, err
	}
	m.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventPlannedFailoverDeferred,
		fmt.Sprintf("planned failover to %s deferred until %s", b.Target, v.retryAfter.UTC().Format(time.RFC3339)))
	out.Next = max(0, v.retryAfter.Sub(m.env.Clock.Now()))
	return out, nil
}

// deferred waits for retryAfter. Removing the annotation, or replacing its
// value, cancels the request; nothing was fenced.
func (m *Planned) deferred(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	value, ok := p.Group.Annotations[v1alpha1.PlannedFailoverAnnotation]
	cancel := ""
	switch {
	case !ok:
		cancel = "the annotation was removed while the request was deferred"
	case value != b.Request:
		cancel = fmt.Sprintf("superseded by the request %q", value)
	}
	if cancel != "" {
		return m.finish(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonCancelled,
			msg: cancel + "; no fence was applied", result: PlannedResultRejected, event: v1alpha1.EventPlannedFailoverFailed})
	}
	now := m.env.Clock.Now()
	if b.RetryAfter != nil && now.Before(b.RetryAfter.Time) {
		return PlannedOutcome{Next: b.RetryAfter.Sub(now), Waiting: "cooldown"}, nil
	}
	return m.advance(ctx, p, b, v1alpha1.PhaseValidating, "cooldown over: validating again")
}

// recloning names the site whose reclone is not over, "" when none: a
// planned failover waits for it, so that no site's data is replaced while
// the topology moves.
func recloning(st *v1alpha1.MysqlFailoverGroupStatus) string {
	for _, s := range st.Sites {
		if s.Recovery != nil && !s.Recovery.Phase.Terminal() {
			return s.Name
		}
	}
	return ""
}
