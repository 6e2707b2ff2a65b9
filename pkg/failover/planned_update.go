package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
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
// planned failover it did not start itself is refused. WaitingForUser
// asks for one, so it is let through then.
func updateRefuses(st *v1alpha1.MysqlFailoverGroupStatus, b *v1alpha1.PlannedFailoverStatus) bool {
	return st.Phase == v1alpha1.GroupPhaseUpdating && b.Origin != v1alpha1.OriginUpdate
}
