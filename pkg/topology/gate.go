package topology

import (
	"fmt"
	"time"
)

// ActCheck is what MayMakeWritable looks at. The times are the operator's
// own and should carry Go's monotonic clock reading (time.Now values), so
// that a pause or a wall-clock step shows as elapsed time and nothing else.
type ActCheck struct {
	// ObserveStarted and ObservedAt are when the pass's probes began and
	// when the last of them returned: the snapshot the decision was made on.
	ObserveStarted time.Time
	ObservedAt     time.Time
	// Now is the moment of the step that would make a site writable.
	Now time.Time
	// PollInterval is the group's; ProbeTimeout bounds one probe.
	PollInterval time.Duration
	ProbeTimeout time.Duration
}

// MayMakeWritable is the rule in front of every step that makes a site
// writable (promotion, re-assertion, unfence): it runs only on a snapshot
// at most one poll interval old. A snapshot that took longer to gather
// than a probe's own bound plus one poll interval was gathered across a
// pause too: some of its answers are older than they look. Otherwise it
// says why not; the caller re-observes and decides again.
func MayMakeWritable(c ActCheck) (bool, string) {
	if c.ObservedAt.IsZero() {
		return false, "no snapshot observed yet"
	}
	if took := c.ObservedAt.Sub(c.ObserveStarted); took > c.ProbeTimeout+c.PollInterval {
		return false, fmt.Sprintf("the snapshot took %s to observe (probe bound %s): it spans a pause",
			took.Round(time.Millisecond), c.ProbeTimeout)
	}
	if age := c.Now.Sub(c.ObservedAt); age > c.PollInterval {
		return false, fmt.Sprintf("the snapshot is %s old, more than the poll interval %s",
			age.Round(time.Millisecond), c.PollInterval)
	}
	return true, ""
}
