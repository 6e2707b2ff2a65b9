package grouploop

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// markAcknowledgers gives Decide, under dataDurability required, the sites
// that may hold acknowledged commits (topology/acknowledgers.go): a site
// read this pass may acknowledge when its replica part is on; a site not
// read, when its status says the part was on when it was last read. A
// restarted mysqld forgets the part, but what it acknowledged before is
// still on its disk, so the record counts.
//
// Nothing bounds what an unread site may have acknowledged: a bound taken
// from the source's count of semi-sync clients was tried and dropped, since
// a count cannot tell which replica is connected (a replica restarting its
// IO thread while an unread one stays connected made the count match, and
// an envtest lost an acknowledged commit). So an unread site that may have
// acknowledged blocks an emergency failover until it answers, or until a
// person sets dataDurability: preferred.
func (l *Loop) markAcknowledgers(g *v1alpha1.MysqlFailoverGroup, sites []topology.SiteView) {
	spec := g.Spec.MySQL.SemiSync
	if !spec.Enabled || spec.DataDurability != v1alpha1.DurabilityRequired {
		return
	}
	source := ackSource(&g.Status)
	for i := range sites {
		s := &sites[i]
		if s.Name == source {
			continue
		}
		if o, ok := l.obs[s.Name]; ok && o.err == nil && !o.at.IsZero() {
			s.MayAcknowledge = o.status.SemiSync.ReplicaEnabled
			continue
		}
		rec := failover.SiteStatusOf(&g.Status, s.Name)
		s.MayAcknowledge = rec.SemiSync != nil && rec.SemiSync.Replica
	}
}

// ackSource is the site whose acknowledged commits are at stake: the
// active site, or, while an emergency failover has not made its target
// writable yet, the site it fails over from (status.activeSite already
// names the target, a replica with no clients of its own).
func ackSource(st *v1alpha1.MysqlFailoverGroupStatus) string {
	if f := st.Failover; f != nil && (f.Step == v1alpha1.StepIntent || f.Step == v1alpha1.StepFencing ||
		f.Step == v1alpha1.StepPromoting) {
		return f.From
	}
	return st.ActiveSite
}
