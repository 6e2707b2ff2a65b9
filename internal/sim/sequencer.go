package sim

import (
	"time"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// Settings are the spec values a sequencer needs.
type Settings struct {
	Cooldown     time.Duration
	MaxLagWait   time.Duration // planned: how long the target may take to catch up
	DrainTimeout time.Duration // emergency: how long the relay log may take to drain
}

// Cycle is what a sequencer gets on each operator poll.
type Cycle struct {
	Now time.Time
	// Decision is Decide's answer for Input, this poll.
	Decision topology.Decision
	Input    topology.Input
	// Status is the persisted authority; changes to it count as persisted
	// before the next SiteOps call.
	Status *Status
	// Ops reaches the sites. Unfence refuses anything but Status.ActiveSite,
	// and refuses while another site may still write (ErrUnsafe).
	Ops      SiteOps
	Settings Settings
	// SidecarGeneration is the generation the site's sidecar was last seen
	// holding; a site should only be made writable once its sidecar holds the
	// generation that names it, or the sidecar fences it right back.
	SidecarGeneration func(site string) int64
	Logf              func(format string, args ...any)
	// Break carries the run's deliberate breakages (tests only).
	Break Breakage
}

// EmergencySequencer runs emergency failovers, one persisted step per call.
// The operator calls it when Decide asks for a failover (KindFailover, or
// KindFailoverBlocked on ReasonFenceUnconfirmed with a Target) or while
// Status.Intent is set. pkg/failover's emergency sequence plugs in here.
type EmergencySequencer interface {
	Step(c *Cycle)
}

// PlannedSequencer runs planned failovers, one persisted phase per call. The
// operator calls it while Status.PlannedRequest is set or Status.Planned holds
// the guard. pkg/failover's planned state machine plugs in here.
type PlannedSequencer interface {
	Step(c *Cycle)
}
