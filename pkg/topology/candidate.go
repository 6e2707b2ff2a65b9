package topology

import "github.com/shipstream/bloodraven/apis/v1alpha1"

// Eligible reports whether a site may be promoted by an emergency failover: a
// primary candidate, reachable and read-only, not fenced by an administrator
// and not diverged.
func Eligible(s SiteView) bool {
	return s.candidateRole() && s.State == v1alpha1.StateReadOnly && !s.AdminFenced && !s.Diverged
}

// Candidate is SelectCandidate's answer. Site is empty when there is none:
// then Divergent is empty when no site is eligible, and otherwise names, for
// every eligible site the freshest one does not contain, the transactions
// promoting the freshest would lose.
type Candidate struct {
	Site      string
	Divergent []Divergence
	// Freshest is, when the sets diverge, the eligible site with the most
	// transactions (first in spec order among equals), which Divergent is
	// measured against.
	Freshest string
}

// SelectCandidate picks the freshest eligible site: the one whose executed
// GTID set contains every other eligible site's. Among equal sets the first in
// sites (spec order) wins. When the eligible sets are not all comparable,
// nothing is picked and the divergent transactions are named.
func SelectCandidate(sites []SiteView) Candidate {
	var eligible []SiteView
	for _, s := range sites {
		if Eligible(s) {
			eligible = append(eligible, s)
		}
	}
	if len(eligible) == 0 {
		return Candidate{}
	}
	best := eligible[0]
	for _, s := range eligible[1:] {
		if s.Executed.Count() > best.Executed.Count() {
			best = s
		}
	}
	var div []Divergence
	for _, s := range eligible {
		if missing := s.Executed.Subtract(best.Executed); !missing.IsEmpty() {
			div = append(div, Divergence{Site: s.Name, GTIDs: missing})
		}
	}
	if len(div) > 0 {
		return Candidate{Divergent: div, Freshest: best.Name}
	}
	return Candidate{Site: best.Name}
}

// holdsAll reports whether s holds every eligible site's transactions.
func holdsAll(s SiteView, sites []SiteView) bool {
	for _, o := range sites {
		if Eligible(o) && !s.Executed.Contains(o.Executed) {
			return false
		}
	}
	return true
}
