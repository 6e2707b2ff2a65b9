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
	if miss := receivedUnapplied(s); !miss.IsEmpty() {
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

// SelectCandidate picks the freshest eligible site: the one whose holdings
// (what it executed plus what it received and will apply, Holdings) contain
// every other eligible site's. Among equal holdings a semi-sync replica that
// acknowledged its source (Replication.SemiSyncAcking) wins, then one whose
// server can take part in semi-sync (SemiSyncUnavailable), then one with
// nothing left to apply (Unapplied), then the first in sites (spec order).
// When the eligible holdings are not all comparable, nothing is picked and
// the divergent transactions are named.
//
// Holdings, not executed sets: a replica may have received, and under
// semi-sync acknowledged, a commit still in its relay log that a replica
// which applied more of the earlier stream never received. Ranking by
// executed sets would promote the latter and lose the acknowledged commit.
// What a site received counts only while the relay log holding it is there
// (Replication.ReceivedLost), and the promotion checks, after the drain,
// that the target holds what it was ranked on (DrainedShort).
//
// Freshness comes first: the replicas of one source receive one binlog
// stream, in order, so the freshest replica holds every write any replica
// received; preferring an acknowledging replica that holds less would lose
// the rest. The preference only breaks a tie.
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
		if missing := gtid.Lacks(Holdings(best), Holdings(s)); !missing.IsEmpty() {
			div = append(div, Divergence{Site: s.Name, GTIDs: missing})
		}
	}
	if len(div) > 0 {
		return Candidate{Divergent: div, Freshest: best.Name}
	}
	return Candidate{Site: best.Name}
}

// Holdings is what s will hold once its relay log is applied: its executed
// set plus what its IO thread received that it has not executed (for
// MariaDB the received position, which gtid.Lacks reads as the history up
// to it). Its executed set alone when what it received is unknown, or its
// relay log is known gone (Replication.ReceivedLost).
func Holdings(s SiteView) gtid.Set {
	r := s.Replication
	if r.RetrievedUnknown || r.ReceivedLost || r.Retrieved.IsEmpty() {
		return s.Executed
	}
	return s.Executed.Union(receivedUnapplied(s))
}

// receivedUnapplied is what s's probe showed received and not executed.
// LacksPart, not Lacks: a received set is a piece of a history, and for
// MariaDB one GTID per domain (Gtid_IO_Pos), so it does not name the other
// servers of the domain that the executed set holds below it; checking
// the fork against them would report an applied position as missing.
func receivedUnapplied(s SiteView) gtid.Set {
	return gtid.LacksPart(s.Executed, s.Replication.Retrieved)
}

// Unapplied is what s received and has not applied, as its probe showed
// (and as Holdings counts it): what the drain must apply before Promote's
// replication reset would discard it.
func Unapplied(s SiteView) gtid.Set {
	return gtid.Lacks(s.Executed, Holdings(s))
}

// DiscardedAtPromotion is what a promotion's replication reset dropped:
// what the target's IO thread held received (retrieved, read once its
// replication stopped, right before the reset) and its executed set
// lacks, one entry per transaction (a MariaDB received position names
// every seq of its domain up to it: gtid.ReceivedUnapplied). It may hold
// what the target received after the probe that ranked it, so it is
// counted as lost unless the promoted set holds it.
func DiscardedAtPromotion(executed, retrieved gtid.Set) gtid.Set {
	return gtid.ReceivedUnapplied(executed, retrieved)
}

// DrainedShort is what target, as the pass ranked it, was credited with
// (Holdings) and its executed set after the drain (after) lacks: empty
// when the drain applied all of it. Anything else means its relay log did
// not hold what its probe showed received (mysqld restarted, or its relay
// log was reset, since the read), and it must not be promoted on that
// ranking: its Holdings outran what it can hold, so another eligible site
// may hold transactions it lacks.
func DrainedShort(target SiteView, after gtid.Set) gtid.Set {
	return gtid.Lacks(after, Holdings(target))
}

// fresher reports whether s is a better candidate than best: its holdings
// strictly contain best's, or they are equal and, in this order, s is a
// semi-sync replica that acknowledged where best is not, s can take part
// in semi-sync where best cannot, or s has nothing left to apply where
// best has. Containment, not counts: a MariaDB received position counts
// as one transaction, yet stands for the history up to it. Between holdings that are not comparable (a divergence,
// reported by SelectCandidate) the one with more transactions is named.
func fresher(s, best SiteView) bool {
	sh, bh := Holdings(s), Holdings(best)
	sLacks, bLacks := !gtid.Lacks(sh, bh).IsEmpty(), !gtid.Lacks(bh, sh).IsEmpty()
	switch {
	case sLacks != bLacks:
		return bLacks
	case !sLacks && s.Replication.SemiSyncAcking != best.Replication.SemiSyncAcking:
		return s.Replication.SemiSyncAcking
	case !sLacks && s.SemiSyncUnavailable != best.SemiSyncUnavailable:
		return !s.SemiSyncUnavailable
	case !sLacks:
		return Unapplied(s).IsEmpty() && !Unapplied(best).IsEmpty()
	}
	return sh.Count() > bh.Count()
}

// holdsAll reports whether s holds every eligible site's transactions,
// counting on both sides what each received and will apply (Holdings).
func holdsAll(s SiteView, sites []SiteView) bool {
	for _, o := range sites {
		if Eligible(o) && !gtid.Lacks(Holdings(s), Holdings(o)).IsEmpty() {
			return false
		}
	}
	return true
}
