package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// The ordered update (docs/upgrades.md) moves the primary role off a stale
// active site through this same state machine, with every guard of a
// request made by the annotation: it persists a Pending block of origin
// update, and the passes after take it through the same phases.

// StartForUpdate begins a planned failover to target on behalf of the
// ordered update. It refuses (ErrPlannedBusy) while any planned failover
// is asked for or in flight.
func (m *Planned) StartForUpdate(ctx context.Context, p Pass, target string) (PlannedOutcome, error) {
	if Requested(p.Group) {
		return PlannedOutcome{Next: -1}, fmt.Errorf("switchover to %s: %w", target, ErrPlannedBusy)
	}
	p.Settings = p.Settings.withDefaults()
	out, err := m.begin(ctx, p, target, v1alpha1.OriginUpdate)
	out.Phase = v1alpha1.PhasePending
	return out, err
}

// UpdateSwitchoverFailed reports when the last planned failover the
// ordered update started failed, and why; zero when it did not fail.
func UpdateSwitchoverFailed(st *v1alpha1.MysqlFailoverGroupStatus) (time.Time, string) {
	b := st.PlannedFailover
	if b == nil || b.Origin != v1alpha1.OriginUpdate || b.Phase != v1alpha1.PhaseFailed || b.CompletionTime == nil {
		return time.Time{}, ""
	}
	return b.CompletionTime.Time, b.Reason
}

// updateRefuses is the interlock: while the ordered update is Updating, a
// planned failover it did not start itself is refused, with the time from
// which it no longer is (zero when that time is unknown). WaitingForUser
// asks for one, so it is let through then, and so is any once the update
// is stalled (topology.UpdateStalled): a stuck update must not hold planned
// failovers back forever.
func updateRefuses(g *v1alpha1.MysqlFailoverGroup, b *v1alpha1.PlannedFailoverStatus, now time.Time) (bool, time.Time) {
	st := &g.Status
	if st.Phase != v1alpha1.GroupPhaseUpdating || b.Origin == v1alpha1.OriginUpdate {
		return false, time.Time{}
	}
	if st.UpdateProgressTime == nil {
		return true, time.Time{}
	}
	deadline := UpdateDeadline(g)
	if topology.UpdateStalled(st.Phase, st.UpdateProgressTime.Time, deadline, now) {
		return false, time.Time{}
	}
	return true, st.UpdateProgressTime.Add(deadline)
}

// updateVerdict is the interlock's refusal, with the time from which the
// update no longer refuses when it is known; false when it lets b through.
func updateVerdict(g *v1alpha1.MysqlFailoverGroup, b *v1alpha1.PlannedFailoverStatus, now time.Time) (verdict, bool) {
	refuse, until := updateRefuses(g, b, now)
	if !refuse {
		return verdict{}, false
	}
	v := verdict{reason: v1alpha1.ReasonConcurrentOperation,
		msg: fmt.Sprintf("an ordered update is in progress (%s); ask again once it ends", g.Status.Message)}
	if !until.IsZero() {
		v.retryAfter = until
		v.msg += fmt.Sprintf(", or after %s if it has taken no step by then (spec.updates.progressDeadline)",
			until.UTC().Format(time.RFC3339))
	}
	return v, true
}

// UpdateDeadline is the group's ordered update's progress deadline
// (topology.RolloutDeadline of spec.updates and spec.instance).
func UpdateDeadline(g *v1alpha1.MysqlFailoverGroup) time.Duration {
	var configured time.Duration
	if d := g.Spec.Updates.ProgressDeadline; d != nil {
		configured = d.Duration
	}
	return topology.RolloutDeadline(configured, g.Spec.Instance.StartDelay.Duration, g.Spec.Instance.StopDelay.Duration)
}
