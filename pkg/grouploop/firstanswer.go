package grouploop

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// The never-answered rule is topology's (SiteView.NeverAnswered,
// topology.ShownState): a site that never answered since its group was
// created shows unknown, not unreachable, and is not failed over from. This
// file observes the fact. Whether a site ever answered must survive operator
// restarts (a restarted operator that finds a primary it served dead fails
// over), so it is read from the persisted status as well as from this
// operator's probes.

// answeredOnce reports whether site was ever observed reachable: by a
// successful probe of this operator, or by the persisted status. It is
// remembered for the loop's life, which outlives its debouncers (they are
// remade when the thresholds change).
func (l *Loop) answeredOnce(g *v1alpha1.MysqlFailoverGroup, site string) bool {
	if l.answered[site] {
		return true
	}
	d := l.deb[site]
	if (d != nil && !d.LastSuccess().IsZero()) || persistedAnswer(&g.Status, site) {
		if l.answered == nil {
			l.answered = map[string]bool{}
		}
		l.answered[site] = true
	}
	return l.answered[site]
}

// persistedAnswer reports whether st shows that site was observed reachable
// at some point: its recorded state is writable or read-only, or it has a
// state transition on record (recordSites records none for a site that
// never answered), or the group has been through a failover.
func persistedAnswer(st *v1alpha1.MysqlFailoverGroupStatus, site string) bool {
	if st.TopologyGeneration > 1 || st.LastFailover != nil {
		return true
	}
	for _, rec := range st.Sites {
		if rec.Name == site {
			return rec.State == v1alpha1.StateWritable || rec.State == v1alpha1.StateReadOnly ||
				rec.LastTransitionTime != nil
		}
	}
	return false
}

// firstAnswer starts the debouncer of a site that never answered afresh
// when its first answer comes: the failures before it were its boot, not
// a failure, so the answer shows at once rather than after recoveryThreshold.
func (l *Loop) firstAnswer(g *v1alpha1.MysqlFailoverGroup, site string, p topology.Probe) {
	d := l.deb[site]
	if p == topology.ProbeFailed || d == nil || d.State() != v1alpha1.StateUnreachable || l.answeredOnce(g, site) {
		return
	}
	if fresh, err := topology.NewDebouncer(int(l.thresholds[0]), int(l.thresholds[1])); err == nil {
		l.deb[site] = fresh
	}
}
