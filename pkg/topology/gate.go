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
	// Site is the site the step makes writable. SidecarAskedAt is when its
	// sidecar last asked this operator for the view (zero: not since this
	// process started). PeerCheckInterval is the group's; zero skips the
	// sidecar rule (a caller that knows no sidecars).
	Site              string
	SidecarAskedAt    time.Time
	PeerCheckInterval time.Duration
}

// SidecarSilence is how long a site's sidecar may go without asking the
// operator before its site may not be made writable: two
// peerCheckIntervals (it asks on every tick, and a tick's gather may run
// late).
func SidecarSilence(peerCheckInterval time.Duration) time.Duration { return 2 * peerCheckInterval }

// MayMakeWritable is the rule in front of every step that makes a site
// writable (promotion, re-assertion, unfence): it runs only on a snapshot
// at most one poll interval old. A snapshot that took longer to gather
// than a probe's own bound plus one poll interval was gathered across a
// pause too: some of its answers are older than they look. Otherwise it
// says why not; the caller re-observes and decides again.
//
// And the site's sidecar must have asked the operator within
// SidecarSilence: its sidecar is what enforces the lease of a writable
// site (and arms mysqld's lease fence). A site whose sidecar is paused or
// gone, made writable, would write on unguarded: cut off next, it keeps
// writing after the operator promotes another site at the lease deadline,
// which counts from that sidecar's last contact.
func MayMakeWritable(c ActCheck) (bool, string) {
	if ok, why := snapshotFresh(c); !ok {
		return false, why
	}
	return SidecarAsking(c)
}

// SidecarAsking is MayMakeWritable's rule on the site's sidecar alone.
func SidecarAsking(c ActCheck) (bool, string) {
	if c.PeerCheckInterval <= 0 {
		return true, ""
	}
	if c.SidecarAskedAt.IsZero() {
		return false, fmt.Sprintf("%s's sidecar has not asked this operator for the view yet: nothing would enforce its lease", c.Site)
	}
	if quiet := c.Now.Sub(c.SidecarAskedAt); quiet > SidecarSilence(c.PeerCheckInterval) {
		return false, fmt.Sprintf("%s's sidecar last asked for the view %s ago, more than two peerCheckIntervals (%s): "+
			"nothing would enforce its lease", c.Site, quiet.Round(time.Millisecond), c.PeerCheckInterval)
	}
	return true, ""
}

// snapshotFresh is the rule on the pass's snapshot.
func snapshotFresh(c ActCheck) (bool, string) {
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
