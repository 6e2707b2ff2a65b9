package topology

import (
	"fmt"
	"time"
)

// mysqld's lease fence is an event in mysqld that fences it when its
// site's lease runs out (pkg/mysql ArmLeaseFence). A site's sidecar pushes
// it later on every tick while its mysqld is writable; the operator arms it
// itself before every step that makes a site writable, because the sidecar
// may have paused since its last ask and would then never arm it.
//
// The operator promotes another site no sooner than its lease deadline for
// this one, which counts from this operator's last contact with the site's
// sidecar (LeaseDeadline): at least the sidecar's last ask, plus
// LeaseTimeout and a PeerCheckInterval. mysqld counts the event's time in
// whole seconds from the second its statement runs in, so an event armed
// for n seconds fires between n-1 and n seconds later, and its scheduler
// may add up to LeaseFenceSchedulerSlack. So the event is armed for that
// deadline, less the scheduler's slack, less the time the arming statement
// may take (its timeout), counted from now: it fires before the operator
// could promote another site, whenever within its timeout the statement
// runs.

// LeaseFenceSchedulerSlack is how late mysqld's event scheduler may run an
// event.
const LeaseFenceSchedulerSlack = time.Second

// MinLeaseFence is the least time a lease fence is armed for: armed for
// less, it could fire within a second of the arm.
const MinLeaseFence = 2 * time.Second

// LeaseFenceArm is what WritableLeaseFence looks at. The times are the
// operator's own, on Go's monotonic clock.
type LeaseFenceArm struct {
	// Site is the site about to be made writable.
	Site string
	// Now is when the arming statement is sent.
	Now time.Time
	// SidecarAskedAt is when the site's sidecar last asked this operator
	// for the view (zero: not since this process started, or the ask may
	// have come from another Pod's sidecar).
	SidecarAskedAt time.Time
	// LeaseTimeout and PeerCheckInterval are the group's spec.sidecar.
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	// Margin is how long the arming statement may take: its timeout.
	Margin time.Duration
}

// LeaseFenceDecision is WritableLeaseFence's answer: arm the lease fence
// for After; or, with After zero, arm none; or, with Refused set, the site
// may not be made writable now, for the reason Refused says.
type LeaseFenceDecision struct {
	After   time.Duration
	Refused string
}

// WritableLeaseFence says how long to arm mysqld's lease fence for before
// the site is made writable: the sidecar's last ask plus LeaseTimeout and
// a PeerCheckInterval, less LeaseFenceSchedulerSlack and Margin, counted
// from Now. When that is less than MinLeaseFence for an ask the
// sidecar-asking rule accepts (SidecarSilence), it arms MinLeaseFence; for
// an older ask, or none known, it refuses: the next pass, after a fresher
// ask, may make the site writable.
//
// A group whose lease is too short for any lease fence (less than
// MinLeaseFence even for an ask made now) has none, from its sidecars
// (sidecar.Loop.LeaseFence) or from the operator: none is armed, and the
// step goes on as it did before there was one.
func WritableLeaseFence(a LeaseFenceArm) LeaseFenceDecision {
	if a.LeaseTimeout <= 0 || a.PeerCheckInterval <= 0 || a.Margin < 0 {
		return LeaseFenceDecision{Refused: fmt.Sprintf("no lease to arm %s's lease fence for (leaseTimeout %s, peerCheckInterval %s, margin %s)",
			a.Site, a.LeaseTimeout, a.PeerCheckInterval, a.Margin)}
	}
	whole := a.LeaseTimeout + a.PeerCheckInterval - LeaseFenceSchedulerSlack - a.Margin
	if whole < MinLeaseFence {
		return LeaseFenceDecision{}
	}
	if a.SidecarAskedAt.IsZero() {
		return LeaseFenceDecision{Refused: fmt.Sprintf("%s's sidecar has not asked this operator for the view: "+
			"no lease to arm its mysqld's lease fence for", a.Site)}
	}
	// An ask recorded after Now (taken a moment before) is an ask now.
	age := max(a.Now.Sub(a.SidecarAskedAt), 0)
	after := whole - age
	switch {
	case after >= MinLeaseFence:
		return LeaseFenceDecision{After: after}
	case age <= SidecarSilence(a.PeerCheckInterval):
		// A short lease (say 4 s with a 1 s tick): an ask the gate accepts
		// leaves less than MinLeaseFence. Refusing would block every step
		// that makes a site writable, a failover included; the least arm
		// fires at most MinLeaseFence after the deadline, where none would
		// never fire.
		return LeaseFenceDecision{After: MinLeaseFence}
	}
	return LeaseFenceDecision{Refused: fmt.Sprintf("%s's sidecar last asked %s ago: its lease fence would be armed for %s, less than %s",
		a.Site, age.Round(time.Millisecond), (whole - age).Round(time.Millisecond), MinLeaseFence)}
}

// SilentLeaseFence says whether to arm a writable active site's lease
// fence on a pass that makes nothing writable, and for how long: when its
// sidecar asked this operator before and has not asked for a
// PeerCheckInterval. A live sidecar pushes the event on every tick, but
// one that released its write hold and could not arm the event (mysqld
// froze in that tick) and then paused leaves a writable mysqld with no
// event: nothing would stop it writing after the operator promotes
// another site at the lease deadline. The arm counts from the last ask,
// as WritableLeaseFence's, so it fires by the time the sidecar itself
// would have fenced; an ask too old for MinLeaseFence arms MinLeaseFence
// (its lease has run out). None for a group whose lease is too short for
// any lease fence, or while the sidecar asks.
func SilentLeaseFence(a LeaseFenceArm) (time.Duration, bool) {
	if a.LeaseTimeout <= 0 || a.PeerCheckInterval <= 0 || a.Margin < 0 || a.SidecarAskedAt.IsZero() {
		return 0, false
	}
	whole := a.LeaseTimeout + a.PeerCheckInterval - LeaseFenceSchedulerSlack - a.Margin
	age := a.Now.Sub(a.SidecarAskedAt)
	if whole < MinLeaseFence || age < a.PeerCheckInterval {
		return 0, false
	}
	return max(whole-age, MinLeaseFence), true
}
