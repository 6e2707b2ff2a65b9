package sim

import (
	"time"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// View is a topology view as the operator's GET /active-site and a sidecar's
// GET /peer/active-site serve it. The zero View (generation 0) means "no view yet".
type View struct {
	Active     string
	Generation int64
	ObservedAt time.Time
	// From names the peer that served the view ("" for the operator).
	From string
	// reply is the answer as the real sidecar read it, when the view came
	// from the real operator or a real sidecar's relay; nil otherwise.
	reply *sidecar.Reply
}

// SidecarLoop is one sidecar's fencing loop, ticked every peerCheckInterval.
// The sim calls Tick with what the sidecar heard this tick: the operator's view
// (nil when the operator could not be reached) and the views of the peers that
// answered. writable says whether the local mysqld accepts writes now. Tick
// returns true, with a reason, when the loop fences its mysqld. A loop never
// unfences. RealSidecar runs pkg/sidecar's Loop behind it; tests wrap or
// reconfigure it through Config.Sidecar to break a rule on purpose.
type SidecarLoop interface {
	Tick(now time.Time, operator *View, peers []View, writable bool) (fence bool, reason string)
	// View is the cached authoritative view, reported to the operator.
	View() View
	// Relay is the view served to peers; none (generation 0) when the
	// sidecar may not vouch for what it holds.
	Relay() View
}

// SidecarSettings configure one sidecar.
type SidecarSettings struct {
	Site              string
	LeaseTimeout      time.Duration
	PeerCheckInterval time.Duration
	// Boot is the sidecar process's id, new at every start.
	Boot string
	// Floor is the highest generation an earlier process of the sidecar
	// saw: it survives a sidecar-only restart (the runner's state file).
	Floor int64
}

// SidecarFactory builds the loop of a sidecar that boots at now.
type SidecarFactory func(s SidecarSettings, now time.Time) SidecarLoop
