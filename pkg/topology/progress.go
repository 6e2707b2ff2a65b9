package topology

import (
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ProgressInput is what the Progressing condition is judged on.
type ProgressInput struct {
	// Failover is the emergency failover in flight, nil when none.
	Failover *Intent
	// PlannedTarget is the target of the planned failover in flight, ""
	// when none.
	PlannedTarget string
	// Updating is true while the ordered update rolls the sites (status
	// .phase Updating; WaitingForUser waits for a person and is not progress).
	Updating bool
	// Recloning names the sites a reclone runs for, in spec order.
	Recloning []string
}

// Progress is the Progressing condition: true with the reason of the first
// change that runs (emergency failover, planned failover, update,
// reclone), false with ReasonIdle when none does.
func Progress(in ProgressInput) (progressing bool, reason, message string) {
	switch {
	case in.Failover != nil:
		return true, v1alpha1.ReasonFailoverRunning, fmt.Sprintf("emergency failover %s -> %s at step %s",
			in.Failover.From, in.Failover.To, in.Failover.Step)
	case in.PlannedTarget != "":
		return true, v1alpha1.ReasonPlannedFailoverRunning, "planned failover to " + in.PlannedTarget
	case in.Updating:
		return true, v1alpha1.ReasonUpdating, "the ordered update rolls the sites"
	case len(in.Recloning) > 0:
		return true, v1alpha1.ReasonRecloning, "recloning " + strings.Join(in.Recloning, ", ")
	}
	return false, v1alpha1.ReasonIdle, "no failover, update or reclone runs"
}

// PrimaryFailing is status.primaryFailingSince after a pass: unset while
// the active site is writable; since (kept) or now (first seen) while it
// is unreachable, or read-only with neither a planned failover nor an
// administrator fence to explain it; unchanged while its state is unknown
// (an operator that just started has not judged it yet).
func PrimaryFailing(since *time.Time, active v1alpha1.SiteState, planned, adminFenced bool, now time.Time) *time.Time {
	switch {
	case active == v1alpha1.StateWritable:
		return nil
	case active == v1alpha1.StateReadOnly && (planned || adminFenced):
		return nil
	case active == v1alpha1.StateUnknown || since != nil:
		return since
	}
	return &now
}
