package controller

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// A site that has never answered since its group was created has not
// failed: a new group whose first site boots a few polls after the others
// would otherwise fail over from a primary that never served. Until the
// site answers once, its failed probes show it unknown, not unreachable,
// so Decide holds the group Degraded/NotReady instead of failing over.
// Whether it ever answered must survive operator restarts (a restarted
// operator that finds a primary it served dead fails over), so it is read
// from the persisted status as well as from this operator's probes.

// answeredOnce reports whether site was ever observed reachable: by a
// successful probe of this operator, or by the persisted status. It is
// remembered for the loop's life, which outlives its debouncers (they are
// remade when the thresholds change).
func (l *groupLoop) answeredOnce(g *v1alpha1.MysqlFailoverGroup, site string) bool {
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

// shownState is the state Decide and status see for a site whose debounced
// state is state: unreachable becomes unknown while the site never answered.
func shownState(state v1alpha1.SiteState, answered bool) v1alpha1.SiteState {
	if state == v1alpha1.StateUnreachable && !answered {
		return v1alpha1.StateUnknown
	}
	return state
}

// neverAnsweredDecision words Decide's NotReady for an active site that has
// never answered, so that it is not read as a site still being probed.
func neverAnsweredDecision(d topology.Decision, active string, answered bool) topology.Decision {
	if d.Kind == topology.KindDegraded && d.Reason == v1alpha1.ReasonNotReady && active != "" && !answered {
		d.Message = fmt.Sprintf("active site %s has not answered since the group was created", active)
	}
	return d
}

// firstAnswer starts the debouncer of a site that never answered afresh
// when its first answer comes: the failures before it were its boot, not
// a failure, so the answer shows at once rather than after recoveryThreshold.
func (l *groupLoop) firstAnswer(g *v1alpha1.MysqlFailoverGroup, site string, p topology.Probe) {
	d := l.deb[site]
	if p == topology.ProbeFailed || d == nil || d.State() != v1alpha1.StateUnreachable || l.answeredOnce(g, site) {
		return
	}
	if fresh, err := topology.NewDebouncer(int(l.thresholds[0]), int(l.thresholds[1])); err == nil {
		l.deb[site] = fresh
	}
}
