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

// newer reports whether v should replace cur: a higher generation, or the same
// generation observed later.
func (v View) newer(cur View) bool {
	return v.Generation > cur.Generation || (v.Generation == cur.Generation && v.ObservedAt.After(cur.ObservedAt))
}

// SidecarLoop is one sidecar's fencing loop, ticked every peerCheckInterval.
// The sim calls Tick with what the sidecar heard this tick: the operator's view
// (nil when the operator could not be reached) and the views of the peers that
// answered. writable says whether the local mysqld accepts writes now. Tick
// returns true, with a reason, when the loop fences its mysqld. A loop never
// unfences. pkg/sidecar's loop plugs in here through a SidecarFactory.
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

// Fence reasons of the model sidecar.
const (
	FenceByView  = "view"  // the authoritative view names another site
	FenceByLease = "lease" // nobody was heard from for leaseTimeout
)

// LeaseSidecar models the fencing rule the design asks of pkg/sidecar:
//   - adopt any heard view that is newer (higher generation, or same generation
//     observed later);
//   - fence when the adopted view names another site;
//   - fence when neither the operator nor a peer that holds a view was heard
//     from for leaseTimeout. A peer without a view (just booted, never reached
//     anyone) does not renew the lease: it has no authority to vouch for,
//     and neither does a view older than the one held.
type LeaseSidecar struct {
	settings    SidecarSettings
	view        View
	lastContact time.Time
	noLease     bool
	// heardOperator: the operator answered this process with a view.
	heardOperator bool
}

// NewLeaseSidecar is the SidecarFactory of the model sidecar.
func NewLeaseSidecar(s SidecarSettings, now time.Time) SidecarLoop {
	return &LeaseSidecar{settings: s, lastContact: now}
}

// NewSidecarWithoutLease is a deliberately broken sidecar that never fences on
// lease expiry, for tests proving that the checker catches split brain.
func NewSidecarWithoutLease(s SidecarSettings, now time.Time) SidecarLoop {
	return &LeaseSidecar{settings: s, lastContact: now, noLease: true}
}

// View implements SidecarLoop.
func (l *LeaseSidecar) View() View { return l.view }

// Relay implements SidecarLoop: what it holds, once the operator answered
// this process; before that it may hold only what a peer told it.
func (l *LeaseSidecar) Relay() View {
	if !l.heardOperator {
		return View{}
	}
	return l.view
}

// Tick implements SidecarLoop.
func (l *LeaseSidecar) Tick(now time.Time, operator *View, peers []View, writable bool) (bool, string) {
	if operator != nil {
		l.hear(now, *operator)
		l.heardOperator = l.heardOperator || operator.Generation >= l.settings.Floor
	}
	for _, p := range peers {
		if p.Generation > 0 {
			l.hear(now, p)
		}
	}
	switch {
	case !writable:
		return false, ""
	case l.view.Generation > 0 && l.view.Active != l.settings.Site:
		return true, FenceByView
	case !l.noLease && now.Sub(l.lastContact) >= l.settings.LeaseTimeout:
		return true, FenceByLease
	}
	return false, ""
}

func (l *LeaseSidecar) hear(now time.Time, v View) {
	if v.Generation < l.view.Generation || v.Generation < l.settings.Floor {
		return // an older view renews nothing, nor one below an earlier process's floor
	}
	l.lastContact = now
	if v.newer(l.view) {
		l.view = v
	}
}
