package topology

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The never-answered rule. A site that has not answered a single probe since
// its group was created has not failed: a new group whose first site boots a
// few polls after the others would otherwise fail over from a primary that
// never served. Until the site answers once (SiteView.NeverAnswered false),
// its failed probes show it unknown, not unreachable, so Decide holds the
// group Degraded/NotReady instead of failing over. Whether it ever answered
// is the caller's observation (its own probes and the persisted status, so
// that a restarted operator that finds a primary it served dead fails over).

// ShownState is the state Decide, and the group's status, show for a site
// whose debounced state is state: unreachable becomes unknown while the site
// never answered.
func ShownState(state v1alpha1.SiteState, neverAnswered bool) v1alpha1.SiteState {
	if state == v1alpha1.StateUnreachable && neverAnswered {
		return v1alpha1.StateUnknown
	}
	return state
}

// shown returns in with every site's State replaced by its ShownState.
func shown(in Input) Input {
	sites := make([]SiteView, len(in.Sites))
	for i, s := range in.Sites {
		s.State = ShownState(s.State, s.NeverAnswered)
		sites[i] = s
	}
	in.Sites = sites
	return in
}

// notObserved is the decision for an active site whose state is unknown: it
// has not been observed yet, or it never answered since the group was created
// (worded so that it is not read as a site still being probed).
func notObserved(a SiteView) Decision {
	msg := fmt.Sprintf("active site %s is not observed yet", a.Name)
	if a.NeverAnswered {
		msg = fmt.Sprintf("active site %s has not answered since the group was created", a.Name)
	}
	return Decision{Kind: KindDegraded, Reason: v1alpha1.ReasonNotReady, Message: msg}
}
