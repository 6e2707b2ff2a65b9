package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A switchover the ordered update started may fail (the target lags, the
// old primary cannot be fenced in time, the target's checks fail). The
// update tries again, but backs off: the n-th failure in a row makes it
// wait SwitchoverRetry × 2^(n-1), at most switchoverRetryMax, and after
// MaxSwitchoverFailures it stops trying and waits for a person
// (WaitingForUser, the update stalled). The count lives in
// status.updateSwitchover, so an operator restart neither resets it nor
// retries at once.

// SwitchoverRetry is how long the update waits before it asks again for a
// switchover after the first one it started failed; each failure in a row
// doubles it.
const SwitchoverRetry = time.Minute

// switchoverRetryMax bounds the wait between two switchovers.
const switchoverRetryMax = 16 * time.Minute

// MaxSwitchoverFailures is how many switchovers in a row may fail before
// the update stops starting them and waits for a person.
const MaxSwitchoverFailures = 5

// SwitchoverFailures is the update's count of failed switchovers in a row.
type SwitchoverFailures struct {
	// Count is how many failed in a row; zero: none since the update began.
	Count int
	// LastAt is when the last one ended, Last why.
	LastAt time.Time
	Last   string
}

// NoteSwitchoverFailure is prev after the update's last switchover, which
// failed at failedAt (zero: the last one did not fail, or there was
// none). A failure is counted once: by its time, to the second, as
// status keeps it (two switchovers never fail within a second: the
// back-off between them is a minute at least).
func NoteSwitchoverFailure(prev SwitchoverFailures, failedAt time.Time, reason string) SwitchoverFailures {
	prev.Count = max(prev.Count, 0)
	// The same failure, seen again on a later pass, carries the same time;
	// any other time is another failure (one earlier than the last on
	// record means that record is ahead: an edit, a clock stepped back).
	if failedAt.IsZero() || failedAt.Truncate(time.Second).Equal(prev.LastAt.Truncate(time.Second)) {
		return prev
	}
	return SwitchoverFailures{Count: prev.Count + 1, LastAt: failedAt, Last: reason}
}

// sane is f as the back-off trusts it: a count below zero (an edited
// status) is zero, so the cap still comes after MaxSwitchoverFailures; a
// last failure later than now (an edited status, a clock stepped back)
// holds nothing, and the next failure is counted from its own time.
func (f SwitchoverFailures) sane(now time.Time) SwitchoverFailures {
	f.Count = max(f.Count, 0)
	if f.LastAt.After(now) {
		f.LastAt = time.Time{}
	}
	return f
}

// SwitchoverRetryDelay is how long the update waits after its n-th failed
// switchover in a row before it starts the next: SwitchoverRetry doubled
// for each failure after the first, at most switchoverRetryMax.
func SwitchoverRetryDelay(n int) time.Duration {
	d := SwitchoverRetry
	for i := 1; i < n && d < switchoverRetryMax; i++ {
		d *= 2
	}
	return min(d, switchoverRetryMax)
}

// switchoverBackoff is the step while the update's last switchover failed:
// a wait until the back-off ends, WaitForUser (stalled) once too many
// failed, and false when the switchover may start.
func switchoverBackoff(in RolloutInput, target, left string) (RolloutStep, bool) {
	f := in.Switchover.sane(in.Now)
	active := in.ActiveSite
	switch {
	case f.Count == 0:
		return RolloutStep{}, false
	case f.Count >= MaxSwitchoverFailures:
		msg := fmt.Sprintf("the switchover of the primary %s failed %d times in a row (last: %s) and is not retried; "+
			"%s", active, f.Count, f.Last, waitForUserMessage(in, target))
		return RolloutStep{Action: RolloutWaitForUser, Site: active, Target: target,
			Phase: v1alpha1.GroupPhaseWaitingForUser, Message: msg, Stalled: true,
			StalledReason: v1alpha1.ReasonSwitchoverRetriesExhausted, StalledMessage: msg}, true
	}
	retry := f.LastAt.Add(SwitchoverRetryDelay(f.Count))
	if !in.Now.Before(retry) {
		return RolloutStep{}, false
	}
	return waitStep(fmt.Sprintf("updating: the switchover of the primary %s failed (%s; %d of %d in a row); "+
		"retrying after %s %s", active, f.Last, f.Count, MaxSwitchoverFailures, retry.UTC().Format(time.RFC3339), left)), true
}

// switchoverAfter is what status.updateSwitchover becomes after step: the
// count is kept while the update goes on, and set to zero once it ended
// (the time of the last failure stays, so that the same failure is not
// counted again by the next update).
func switchoverAfter(in RolloutInput, step RolloutStep) SwitchoverFailures {
	if step.Action == RolloutIdle {
		return SwitchoverFailures{LastAt: in.Switchover.LastAt}
	}
	return in.Switchover
}
