package grouploop

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// markAcknowledgers gives Decide, under dataDurability required, the sites
// that may hold acknowledged commits (topology/acknowledgers.go): a site
// read this pass may acknowledge when its replica part is on; a site not
// read, when its status says the part was on when it was last read. A
// restarted mysqld forgets the part, but what it acknowledged before is
// still on its disk, so the record counts.
//
// What such a site may have acknowledged is bounded (ackBound) once a pass
// reads the active site with every semi-sync client it counts accounted
// for by sites read this pass (connected, part on): the unread site was
// not a client then, so it acknowledged nothing the active site executed
// after. The bound is the active site's executed set at that probe; it is
// kept until the site is read again, and dropped for every unread site
// when a pass finds a client it cannot account for (one of them may have
// reconnected). This operator's memory only: after a restart, an unread
// site's bound is unknown until such a pass.
func (l *Loop) markAcknowledgers(g *v1alpha1.MysqlFailoverGroup, sites []topology.SiteView) {
	spec := g.Spec.MySQL.SemiSync
	if !spec.Enabled || spec.DataDurability != v1alpha1.DurabilityRequired {
		l.ackBound = nil
		return
	}
	active := ackSource(&g.Status)
	read := func(site string) bool { o, ok := l.obs[site]; return ok && o.err == nil && !o.at.IsZero() }
	if l.ackBound == nil {
		l.ackBound = map[string]gtid.Set{}
	}
	accounted, at := l.clientsAccounted(g, active, read)
	for i := range sites {
		s := &sites[i]
		if s.Name == active {
			continue
		}
		if read(s.Name) {
			s.MayAcknowledge = l.obs[s.Name].status.SemiSync.ReplicaEnabled
			delete(l.ackBound, s.Name)
			continue
		}
		rec := failover.SiteStatusOf(&g.Status, s.Name)
		s.MayAcknowledge = rec.SemiSync != nil && rec.SemiSync.Replica
		_, bounded := l.ackBound[s.Name]
		switch {
		case read(active) && !accounted:
			delete(l.ackBound, s.Name)
		case read(active) && !bounded:
			l.ackBound[s.Name] = at
		}
		if b, ok := l.ackBound[s.Name]; ok {
			s.AckBound, s.AckBoundKnown = b, true
		}
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

// clientsAccounted reports whether the active site, read this pass, has no
// more semi-sync clients than the sites read this pass that replicate from
// it with their replica part on and their IO thread connected, and the
// active site's executed set at that probe.
func (l *Loop) clientsAccounted(g *v1alpha1.MysqlFailoverGroup, active string, read func(string) bool) (bool, gtid.Set) {
	if active == "" || !read(active) {
		return false, gtid.Set{}
	}
	src := l.obs[active].status
	connected := 0
	for _, s := range g.Spec.Sites {
		if s.Name == active || !read(s.Name) {
			continue
		}
		st := l.obs[s.Name].status
		if rs := st.Replica; st.SemiSync.ReplicaEnabled && rs != nil && rs.IORunning == mysql.ThreadYes &&
			l.replicatesFrom(st, active) {
			connected++
		}
	}
	return src.SemiSync.SourceClients <= connected, src.Executed
}
