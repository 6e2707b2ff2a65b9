package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// decideHealth grades a group whose active site writes and has no extra
// writer. An active site an administrator fenced is fenced first
// (adminFenceActive). Otherwise the first problem found names the reason:
// divergence, a peer down, a peer not yet observed, broken replication, then
// lag.
func decideHealth(in Input, a SiteView) Decision {
	if d, ok := adminFenceActive(in, a); ok {
		return d
	}
	if dv := divergence(in, a); len(dv) > 0 {
		sites := make([]string, len(dv))
		for i, d := range dv {
			sites[i] = d.Site
		}
		return Decision{Kind: KindDegraded, Reason: v1alpha1.ReasonDivergence, Divergent: dv,
			Message: fmt.Sprintf("%s hold transactions %s never saw; they do not rejoin", strings.Join(sites, ", "), a.Name)}
	}
	peers := func(keep func(SiteView) bool) []string {
		return names(in.Sites, func(s SiteView) bool { return s.Name != a.Name && keep(s) })
	}
	checks := []struct {
		reason, what string
		sites        []string
	}{
		{v1alpha1.ReasonPeerDown, "unreachable", peers(func(s SiteView) bool { return s.State == v1alpha1.StateUnreachable })},
		{v1alpha1.ReasonNotReady, "not observed yet", peers(func(s SiteView) bool { return s.State == v1alpha1.StateUnknown })},
		{v1alpha1.ReasonReplicationBroken, "not replicating", peers(func(s SiteView) bool {
			return s.State == v1alpha1.StateReadOnly && (!s.Replication.Running || s.Replication.Error != "")
		})},
		{v1alpha1.ReasonReplicaLagging, "lagging", peers(func(s SiteView) bool {
			return s.State == v1alpha1.StateReadOnly && s.Replication.Lag > in.MaxLag
		})},
	}
	for _, c := range checks {
		if len(c.sites) > 0 {
			return Decision{Kind: KindDegraded, Reason: c.reason,
				Message: fmt.Sprintf("%s %s", strings.Join(c.sites, ", "), c.what)}
		}
	}
	return Decision{Kind: KindHealthy, Reason: v1alpha1.ReasonHealthy,
		Message: fmt.Sprintf("%s writes, every peer replicates", a.Name)}
}

// divergence lists the sites that are flagged diverged or that hold
// transactions the writing active site lacks (compared only between fresh
// observations, and leaving out the active server's own transactions).
func divergence(in Input, a SiteView) []Divergence {
	var out []Divergence
	for _, s := range in.Sites {
		if s.Name == a.Name {
			continue
		}
		var errant gtid.Set
		if s.reachable() && !s.Stale && !a.Stale {
			errant = withoutSource(gtid.Lacks(a.Executed, s.Executed), a.ServerID)
		}
		if s.Diverged || !errant.IsEmpty() {
			out = append(out, Divergence{Site: s.Name, GTIDs: errant})
		}
	}
	return out
}

// withoutSource returns set without the transactions of source id.
func withoutSource(set gtid.Set, id string) gtid.Set {
	ivs := set.Intervals(id)
	if id == "" || len(ivs) == 0 {
		return set
	}
	parts := make([]string, len(ivs))
	for i, iv := range ivs {
		parts[i] = iv.String()
	}
	own, err := gtid.ParseSet(id + ":" + strings.Join(parts, ":"))
	if err != nil {
		return set // cannot happen: id and intervals come from set itself
	}
	return set.Subtract(own)
}
