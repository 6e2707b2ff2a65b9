package grouploop

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// markHistory keeps status true to the group's history in every pass,
// whatever the decision: the errant marks and the last failover's loss.
// The loss is accounted as soon as the former primary can be read, even
// while the new active site is down (a pass that is never healthy).
func (l *Loop) markHistory(g *v1alpha1.MysqlFailoverGroup, d topology.Decision) {
	l.markErrant(g, d)
	keepAbandonedWrote(g, d)
	l.accountLoss(g)
}

// keepAbandonedWrote adds to the in-flight intent what Decide found its
// abandoned targets to have written (Decision.AbandonedWrote): read once
// from any site, it stays the history's until the target is made
// writable, though no site read later holds it.
func keepAbandonedWrote(g *v1alpha1.MysqlFailoverGroup, d topology.Decision) {
	it := g.Status.Failover
	if it == nil || d.AbandonedWrote.IsEmpty() {
		return
	}
	cur, err := gtid.ParseSet(it.AbandonedGtidSet)
	if err == nil && cur.Contains(d.AbandonedWrote) {
		return
	}
	it.AbandonedGtidSet = cur.Union(d.AbandonedWrote).String() // an unparseable record is replaced
}

// markErrant persists, in every pass whatever the decision, the sites
// Decide saw holding transactions outside the authority's history: their
// divergentGtid (once; a marked site never rejoins by itself), a
// DivergenceDetected Event, and the diverged gauge. Issue 13 path 3: a
// former primary seen only while no site writes is marked all the same.
func (l *Loop) markErrant(g *v1alpha1.MysqlFailoverGroup, d topology.Decision) {
	for _, dv := range d.Errant {
		l.markDiverged(g, dv, fmt.Sprintf("site %s holds %d transactions outside the group's history (generation %d): %s; it is never promoted and will not rejoin",
			dv.Site, dv.GTIDs.Count(), g.Status.TopologyGeneration, dv.GTIDs))
	}
	for _, s := range g.Status.Sites {
		v := 0.0
		if s.DivergentGtid != "" {
			v = 1
		}
		l.env.Metrics.Diverged.WithLabelValues(g.Namespace, g.Name, s.Name).Set(v)
		l.env.Metrics.DivergentTxns.WithLabelValues(g.Namespace, g.Name, s.Name).Set(divergentCount(s.DivergentGtid))
	}
}

// recordedServerID is the site's source id as status last recorded it.
func recordedServerID(st *v1alpha1.MysqlFailoverGroupStatus, site string) string {
	return failover.SiteStatusOf(st, site).ServerID
}

// candidacy fills what Decide needs to judge a replica whose SQL thread
// stopped on an error: whether it did, and what its IO thread received
// (MySQL Retrieved_Gtid_Set; MariaDB Gtid_IO_Pos, each domain's position as
// the one GTID it names, which the executed state covers once applied).
func candidacy(r *topology.Replication, rs mysql.ReplicaStatus, flavor v1alpha1.Flavor) {
	r.SQLError = rs.LastSQLErrno != 0 && !rs.SQLRunning
	set, err := rs.RetrievedSet(flavor)
	r.Retrieved, r.RetrievedUnknown = set, err != nil
}
