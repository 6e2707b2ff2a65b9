package grouploop

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// untaint removes the lost-primary taint from the active site's nodes once
// this pass observed the site writable, with no failover in flight. An
// emergency failover tainted them when the site lost the role
// (failover.Emergency's routing step); a site that holds the role again
// (re-asserted, failed over back or switched back) must be schedulable on
// its own nodes. UntaintSite removes only this group's taint and changes
// nothing the second time; the loop asks once per site and generation, and
// again after a restart of the operator or a failed attempt.
func (l *Loop) untaint(ctx context.Context, p failover.Pass) {
	w, ok := l.env.Router.(siteWorkloads)
	if !ok {
		return
	}
	g := p.Group
	st, start := &g.Status, &l.patcher.read
	site := st.ActiveSite
	if site == "" || site != start.ActiveSite || st.Failover != nil || failover.PlannedInFlight(st) ||
		l.untainted[site] == st.TopologyGeneration {
		return
	}
	if o, seen := l.obs[site]; !seen || o.err != nil || !o.status.Writable() {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	n, err := w.UntaintSite(cctx, g, site)
	if err != nil {
		l.log.Error(err, "untaint the active site's nodes", "site", site)
		return
	}
	l.untainted[site] = st.TopologyGeneration
	if n > 0 {
		l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventSiteUntainted,
			fmt.Sprintf("%s is writable again (generation %d): the lost-primary taint is removed from %d of its nodes",
				site, st.TopologyGeneration, n))
	}
}
