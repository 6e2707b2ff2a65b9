package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A stuck update must not hold planned failovers back forever. While the
// update is Updating, a planned failover it did not start is refused (it
// may be restarting a site at that moment), so an update that never
// finishes, say because a restarted site's Pod never becomes Ready, would
// refuse every planned failover. The update therefore keeps the time it
// last took a step (status.updateProgressTime); once that is older than
// its progress deadline it is stalled: it is reported (the UpdateStalled
// condition and a Warning Event) and no longer refuses planned failovers.
// A stalled update takes no step by itself, since every step waits for
// every other site to be back; a planned failover admitted meanwhile makes
// it wait (rolloutBusy) until the failover ends.

// defaultProgressDeadline is spec.updates.progressDeadline when omitted.
const defaultProgressDeadline = 10 * time.Minute

// RolloutDeadline is the update's progress deadline: configured (zero
// means the default, 10 minutes), but never shorter than startDelay plus
// stopDelay, the time a site's restart may legitimately take.
func RolloutDeadline(configured, startDelay, stopDelay time.Duration) time.Duration {
	d := configured
	if d <= 0 {
		d = defaultProgressDeadline
	}
	return max(d, startDelay+stopDelay)
}

// UpdateStalled reports whether an update in phase, which last took a step
// at progressAt, is stalled at now: it is Updating and has taken no step
// for longer than deadline. An update whose progressAt is unknown (zero) is
// not stalled; its next pass sets it.
func UpdateStalled(phase v1alpha1.GroupPhase, progressAt time.Time, deadline time.Duration, now time.Time) bool {
	return phase == v1alpha1.GroupPhaseUpdating && !progressAt.IsZero() && deadline > 0 &&
		now.Sub(progressAt) > deadline
}

// rolloutProgress sets the step's ProgressAt (what status.updateProgressTime
// becomes) and Stalled. The clock starts when the update begins and
// restarts at each step it takes; waiting for a person (WaitForUser) is
// not being stuck. It does not restart while a failover holds the update
// back, so that a planned failover admitted during a stalled update does
// not make the next one wait a whole deadline again, nor when the update
// retries a switchover that failed: a switchover failing every minute is
// no progress. Nor does an in-place upgrade restart it: a sidecar that
// refuses or fails every upgrade is asked again each pass, and PlanRollout
// cannot tell a first ask from a retry. Each in-place upgrade takes
// seconds, so the upgrades of a whole group fit in one deadline; a site
// restart (or a switchover) in between restarts the clock.
func rolloutProgress(in RolloutInput, step *RolloutStep) {
	switch {
	case step.Stalled:
		// The switchover's retries are exhausted: no progress, and
		// stalled already, whatever the deadline.
		step.ProgressAt = in.ProgressAt
		if step.ProgressAt.IsZero() {
			step.ProgressAt = in.Now
		}
		return
	case step.Phase == v1alpha1.GroupPhaseNone || step.Action == RolloutIdle:
		step.ProgressAt = time.Time{}
		return
	case step.Action != RolloutWait && step.Action != RolloutUpgradeInPlace && !retriedSwitchover(in, step):
		step.ProgressAt = in.Now
		return
	case in.ProgressAt.IsZero() || in.Phase == v1alpha1.GroupPhaseNone:
		step.ProgressAt = in.Now // the update begins (or an older operator ran it)
		return
	}
	step.ProgressAt = in.ProgressAt
	if !UpdateStalled(step.Phase, step.ProgressAt, in.ProgressDeadline, in.Now) {
		return
	}
	since := step.ProgressAt.UTC().Format(time.RFC3339)
	step.Stalled, step.StalledReason = true, v1alpha1.ReasonProgressDeadlineExceeded
	step.StalledMessage = fmt.Sprintf("the update has taken no step since %s (progress deadline %s): %s; "+
		"planned failovers are no longer held back by it", since, in.ProgressDeadline, step.Message)
	step.Message = fmt.Sprintf("stalled, no step since %s: %s", since, step.Message)
}

// retriedSwitchover: the step starts a switchover after the update's last
// one failed.
func retriedSwitchover(in RolloutInput, step *RolloutStep) bool {
	return step.Action == RolloutSwitchover && in.Switchover.Count > 0
}
