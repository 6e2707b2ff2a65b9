package grouploop

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// readRouter is the part of pkg/routing's Router that keeps the read
// Services' label; a Router without it (the simulator's) routes no reads.
type readRouter interface {
	SetReadRoutes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, routable map[string]bool) ([]string, error)
	LeaveReadRoutes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, routable map[string]bool) ([]string, error)
}

// readRoutes applies topology.ReadRoutes to the Pods' routable label at the
// end of a pass, judged against the active site as the pass left it: a
// site the pass demoted is no longer active, so its last writable
// observation makes it an extra writer, never a replica that serves reads.
// Each site whose label changed gets a ReadRoutingChanged Event.
func (l *Loop) readRoutes(ctx context.Context, p failover.Pass) {
	rr, ok := l.env.Router.(readRouter)
	if !ok || l.env.Router == nil {
		return
	}
	g := p.Group
	// Unsettled, the pass's probes predate what it changed: a site may
	// leave on them (conservative), none may join; the next settled pass
	// judges joins on fresh probes.
	settled := routesSettled(&l.patcher.read, &g.Status)
	recovering := map[string]bool{}
	for _, s := range g.Status.Sites {
		recovering[s.Name] = s.Recovery != nil && !s.Recovery.Phase.Terminal()
	}
	routes := topology.ReadRoutes(topology.ReadRouteInput{Sites: p.Input.Sites, Active: g.Status.ActiveSite,
		MaxLag: time.Duration(g.Spec.Replication.MaxLagSeconds) * time.Second, Recovering: recovering})
	routable := map[string]bool{}
	reasons := map[string]topology.ReadReason{}
	for _, r := range routes {
		routable[r.Site], reasons[r.Site] = r.Routable, r.Reason
		if !settled && r.Routable {
			continue // the gauge follows the label, which does not join now
		}
		v := 0.0
		if r.Routable {
			v = 1
		}
		l.env.Metrics.Routable.WithLabelValues(g.Namespace, g.Name, r.Site).Set(v)
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	set := rr.SetReadRoutes
	if !settled {
		set = rr.LeaveReadRoutes
	}
	changed, err := set(cctx, g, routable)
	for _, site := range changed {
		msg := fmt.Sprintf("site %s left the read Services: %s", site, reasons[site])
		if routable[site] {
			msg = fmt.Sprintf("site %s joined the read Services: healthy", site)
		}
		l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventReadRouting, msg)
	}
	if err != nil {
		l.log.Error(err, "read routes")
	}
}

// routesSettled reports whether read routes may be judged on this pass's
// probes: no emergency or planned failover holds the topology at the
// pass's start or end, and the pass changed neither the active site nor
// the generation. Otherwise the probes, taken before the pass acted,
// could put back a site the pass fenced or demoted (an old primary being
// drained, seen writable at the pass's start): its labels stay as the
// role change left them, and the next pass judges on fresh probes.
func routesSettled(start, now *v1alpha1.MysqlFailoverGroupStatus) bool {
	for _, st := range []*v1alpha1.MysqlFailoverGroupStatus{start, now} {
		if st.Failover != nil || failover.PlannedInFlight(st) {
			return false
		}
	}
	return start.ActiveSite == now.ActiveSite && start.TopologyGeneration == now.TopologyGeneration
}
