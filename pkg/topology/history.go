package topology

import (
	"slices"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// The authority's history is what the last failover's target held when it
// was made writable (Input.Promoted) plus what the authority's writers wrote
// since, under their own source ids. A site holding anything else holds
// writes the group discarded (an isolated old primary's acknowledged tail, a
// replica's errant write): it is never promoted nor re-asserted, and it is
// reported as diverged whenever it is seen, not only while a primary writes.

// NamedActiveBase is the history's base once a planned failover names its
// target active: the recorded promotion set united with the source's fenced
// set, which the target was checked to hold. The source wrote as the active
// site until its fence, maybe without a failover record naming it (named
// active by a planned failover that failed after its fence, then
// re-asserted); once another site is named, the source is no writer of the
// history any more, and its writes would be judged errant everywhere. The
// fenced set is the whole history at the moment of naming: the source was
// its one writer, it is fenced, and the target holds the set while judged
// not diverged. The target's promotion replaces the base with its own
// executed set, a superset.
func NamedActiveBase(promoted, fenced gtid.Set) gtid.Set { return promoted.Union(fenced) }

// historyWriters are the sites whose own transactions extend the history
// past Promoted: the last failover's target, the active site once it may
// write (no emergency failover in flight, or its target already writable
// or maybe writable: a promotion whose answer was lost may have taken
// effect, and whether its writes are the history is decided when the
// failover completes or moves on), and the site an emergency failover in
// flight started from, which wrote as the active site until then even when
// no failover record names it (named active by a planned failover that
// failed after its fence, then re-asserted). The targets it abandoned by
// a retarget while they were maybe writable extend it too, but only by
// what they are known to have written (abandonedKnown), not by every
// transaction of their servers. known is false when a writer's source id
// is unknown, so that its transactions cannot be told from errant ones.
func historyWriters(in Input, active string) (ids []string, known bool) {
	var sites []string
	if last := in.LastFailover(); last != nil {
		sites = append(sites, last.To)
	}
	if a, ok := in.Site(active); ok && (in.InFlight == nil || a.State == v1alpha1.StateWritable || a.MaybeWritable) {
		sites = append(sites, active)
	}
	if in.InFlight != nil {
		sites = append(sites, in.InFlight.From)
	}
	known = true
	for _, name := range sites {
		s, ok := in.Site(name)
		if !ok || s.ServerID == "" {
			known = false
			continue
		}
		ids = append(ids, s.ServerID)
	}
	for _, name := range listedAbandoned(in) {
		if s, _ := in.Site(name); s.ServerID == "" {
			known = false
		}
	}
	return ids, known
}

// listedAbandoned are the in-flight failover's abandoned targets that
// still extend the history: only until its target is made writable, when
// the target's promotion set takes over (what an abandoned site wrote that
// the target holds is in it; what it does not hold is discarded). A target
// moved back to stays listed, its writes while abandoned being the
// history's. Entries that cannot be abandoned targets are ignored: a site
// since removed from spec (it wrote nothing the group sees), the
// failover's source (a writer anyway), a repeat.
func listedAbandoned(in Input) []string {
	if in.InFlight == nil || !beforePromotion(in.InFlight.Step) {
		return nil
	}
	var out []string
	for _, name := range in.InFlight.Abandoned {
		if _, ok := in.Site(name); ok && name != in.InFlight.From && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// abandonedKnown is what the listed abandoned targets are known to have
// written: the intent's record (Intent.AbandonedWrote, each listed site's
// own server's part only), and, for a listed site that is not the
// failover's target now, its own server's transactions outside the
// history (outside Promoted, and in no earlier failover's lost set) that
// any site read now holds. A listed site wrote only as a maybe-writable
// target, after it was judged eligible, so those are its writes as that
// target. The target's own reads add nothing: a stale or edited status
// that lists the target itself exempts no write the record does not
// name. The result is what Decide returns for the intent to keep
// (Decision.AbandonedWrote).
func abandonedKnown(in Input) gtid.Set {
	listed := listedAbandoned(in)
	if len(listed) == 0 {
		return gtid.Set{}
	}
	var lost gtid.Set
	for _, h := range in.History {
		lost = lost.Union(h.Lost)
	}
	var known gtid.Set
	for _, name := range listed {
		a, _ := in.Site(name)
		if a.ServerID == "" {
			continue
		}
		known = known.Union(in.InFlight.AbandonedWrote.Only(a.ServerID))
		if name == in.InFlight.To {
			continue
		}
		for _, x := range in.Sites {
			if x.reachable() && !x.Stale {
				known = known.Union(gtid.Lacks(in.Promoted, x.Executed).Only(a.ServerID).Subtract(lost))
			}
		}
	}
	return known
}

// historyErrant returns the transactions of s that are outside the
// authority's history: outside Promoted (compared by gtid.Cover's rule) or
// inside an earlier failover's lost set, and neither written by a writer
// since nor known to be an abandoned target's writes (abandoned).
func historyErrant(in Input, s SiteView, writers []string, abandoned gtid.Set) gtid.Set {
	var lost gtid.Set
	for _, h := range in.History {
		lost = lost.Union(h.Lost)
	}
	var errant gtid.Set
	if in.promotedKnown() {
		errant = gtid.Lacks(in.Promoted, s.Executed)
	}
	// What s holds of the lost sets, by Cover's rule: a MariaDB set names
	// seqs by BinlogState.Set's guess, which shifts as a history grows,
	// while a server's last seq is a fact. For MySQL this is the plain
	// intersection and difference.
	errant = errant.Union(gtid.LacksPart(in.Promoted, gtid.Cover(s.Executed).Intersect(lost)))
	for _, id := range writers {
		errant = errant.Without(id)
	}
	return errant.Subtract(abandoned)
}

// Judge returns in as Decide sees it: every site that never answered shown
// unknown rather than unreachable (ShownState), and every site that holds
// transactions outside the authority's history flagged Diverged. Callers
// that read states or eligibility from the Input themselves (the failover
// sequences, the planned failover's validation, repointing) should read
// this one.
func Judge(in Input) Input {
	if in.Validate() != nil {
		return in // Decide refuses it
	}
	in = shown(in)
	judged, _ := judgeHistory(in, authority(in))
	return judged
}

// judgeHistory returns in with every site that holds transactions outside
// the authority's history flagged Diverged, and the divergences to record:
// those of fresh observations, found while every writer's source id is
// known. A writable active site is the history's writer and is not judged.
func judgeHistory(in Input, active string) (Input, []Divergence) {
	if !in.promotedKnown() && !anyLost(in.History) {
		return in, nil
	}
	writers, known := historyWriters(in, active)
	abandoned := abandonedKnown(in)
	sites := make([]SiteView, len(in.Sites))
	var found []Divergence
	for i, s := range in.Sites {
		sites[i] = s
		if s.Name == active && s.State == v1alpha1.StateWritable {
			continue
		}
		errant := historyErrant(in, s, writers, abandoned)
		if errant.IsEmpty() {
			continue
		}
		sites[i].Diverged = true
		if known && s.reachable() && !s.Stale {
			found = append(found, Divergence{Site: s.Name, GTIDs: errant})
		}
	}
	in.Sites = sites
	return in, found
}

// promotedKnown reports whether Promoted is a recorded promotion set.
func (in Input) promotedKnown() bool { return in.PromotedKnown || !in.Promoted.IsEmpty() }

func anyLost(h []FailoverRecord) bool {
	for _, r := range h {
		if !r.Lost.IsEmpty() {
			return true
		}
	}
	return false
}
