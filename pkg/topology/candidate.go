package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Eligible reports whether a site may be promoted by an emergency failover: a
// primary candidate, reachable and read-only, not fenced by an administrator,
// not diverged, and not holding received transactions it cannot apply (see
// relayUnapplied).
func Eligible(s SiteView) bool {
	return s.candidateRole() && s.State == v1alpha1.StateReadOnly && !s.AdminFenced && !s.Diverged &&
		relayUnapplied(s) == ""
}

// relayUnapplied says why a site whose SQL thread stopped on an error is
// not a candidate: its relay log holds transactions it has not applied (or
// what it received is unknown), so promoting it would drop them, or apply
// them behind new writes once someone restarts its thread. "" when the SQL
// thread did not fail, or failed with the relay log fully applied.
func relayUnapplied(s SiteView) string {
	r := s.Replication
	switch {
	case !r.SQLError:
		return ""
	case r.RetrievedUnknown:
		return "its SQL thread stopped on an error and what it received is unknown"
	}
	if miss := gtid.Lacks(s.Executed, r.Retrieved); !miss.IsEmpty() {
		return fmt.Sprintf("its SQL thread stopped on an error with %s (%d transactions) received but not applied",
			miss, miss.Count())
	}
	return ""
}

// excluded lists, for a person, why primary-candidate sites that answer are
// not eligible; "" when there is nothing to say.
func excluded(sites []SiteView) string {
	var why []string
	for _, s := range sites {
		if !s.candidateRole() || !s.reachable() {
			continue
		}
		switch {
		case s.State != v1alpha1.StateReadOnly:
		case s.AdminFenced:
			why = append(why, s.Name+" is fenced by an administrator")
		case s.Diverged:
			why = append(why, s.Name+" is diverged")
		case relayUnapplied(s) != "":
			why = append(why, s.Name+": "+relayUnapplied(s))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return " (" + strings.Join(why, "; ") + ")"
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
// GTID set contains every other eligible site's. Among equal sets a
// semi-sync replica that acknowledged its source (Replication.SemiSyncAcking)
// wins, then the first in sites (spec order). When the eligible sets are not
// all comparable, nothing is picked and the divergent transactions are named.
//
// Freshness comes first: the replicas of one source receive one binlog
// stream, in order, so the freshest replica holds every write any replica
// applied; preferring an acknowledging replica that holds less would lose
// the rest. The preference only breaks a tie. What a replica received and
// acknowledged but has not applied is not counted (a known limit,
// docs/durability.md "Choosing a candidate").
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
		if fresher(s, best) {
			best = s
		}
	}
	var div []Divergence
	for _, s := range eligible {
		// Lacks, not Subtract: MariaDB sets name seqs by a guess that
		// differs between a history and its prefix (gtid.Lacks).
		if missing := gtid.Lacks(best.Executed, s.Executed); !missing.IsEmpty() {
			div = append(div, Divergence{Site: s.Name, GTIDs: missing})
		}
	}
	if len(div) > 0 {
		return Candidate{Divergent: div, Freshest: best.Name}
	}
	return Candidate{Site: best.Name}
}

// fresher reports whether s is a better candidate than best: more
// transactions, or as many and a semi-sync replica that acknowledged where
// best is not.
func fresher(s, best SiteView) bool {
	n, m := s.Executed.Count(), best.Executed.Count()
	return n > m || n == m && s.Replication.SemiSyncAcking && !best.Replication.SemiSyncAcking
}

// holdsAll reports whether s holds every eligible site's transactions.
func holdsAll(s SiteView, sites []SiteView) bool {
	for _, o := range sites {
		if Eligible(o) && !gtid.Lacks(s.Executed, o.Executed).IsEmpty() {
			return false
		}
	}
	return true
}
