package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Under dataDurability required a commit is acknowledged once a replica
// has it, so after the primary is lost an acknowledged commit may exist on
// one replica only. SelectCandidate compares the sites it can read; a
// replica it cannot read that may have acknowledged (MayAcknowledge) may
// hold commits the target lacks, and promoting the target would lose them
// silently. So the promotion waits until that site answers.
//
// A person who prefers availability sets dataDurability: preferred; the
// caller then sets no MayAcknowledge, and the promotion goes on.

// unreadAcknowledgers names the sites, other than from (the source whose
// commits are at stake) and target, that may hold acknowledged commits
// target lacks and cannot be read now. A site whose data a reclone is
// replacing (DataReplaced) is not one: its mysqld is stopped while it is
// cloned, and what it held was proven held elsewhere first.
func unreadAcknowledgers(in Input, from, target string) []string {
	return names(in.Sites, func(s SiteView) bool {
		return s.MayAcknowledge && !s.DataReplaced && s.Name != from && s.Name != target && (!s.reachable() || s.Stale)
	})
}

// A site the operator reads but may not promote (administrator-fenced,
// another role, its applier broken) is not among the candidates
// SelectCandidate compares, yet under required it may have acknowledged
// commits too (Acknowledger slots). When it holds what the target lacks,
// those commits may exist on it alone: promoting the target would lose
// them as silently as an unread acknowledger's. So the promotion waits
// for it in the same way: until it can be promoted (its fence lifted), the
// target holds them, or a person sets dataDurability preferred.

// unpromotableAhead names the readable sites, other than from and target,
// that may have acknowledged (MayAcknowledge), cannot be promoted, and
// hold transactions target's holdings lack; with what they hold beyond.
// Diverged sites hold what the group discarded, and a reclone's site was
// proven held elsewhere: neither counts.
func unpromotableAhead(in Input, from string, target SiteView) ([]string, gtid.Set) {
	var ahead gtid.Set
	sites := names(in.Sites, func(s SiteView) bool {
		if !s.MayAcknowledge || s.DataReplaced || s.Diverged || s.Name == from || s.Name == target.Name ||
			!s.reachable() || s.Stale || Eligible(s) {
			return false
		}
		more := gtid.Lacks(Holdings(target), Holdings(s))
		ahead = ahead.Union(more)
		return !more.IsEmpty()
	})
	return sites, ahead
}

// unpromotableBlock keeps target read-only while sites it may not promote
// hold acknowledged commits it lacks.
func unpromotableBlock(want Kind, target string, sites []string, ahead gtid.Set) Decision {
	return blocked(want, v1alpha1.ReasonAcknowledgerUnpromotable, target, fmt.Sprintf(
		"%s may hold commits acknowledged under dataDurability required that %s lacks (%s, %d transactions), "+
			"and cannot be promoted (administrator-fenced, another role, or its applier stopped on an error); "+
			"%s stays read-only until %s holds them or %s can be promoted (lift its fence), "+
			"or set spec.mysql.semiSync.dataDurability: preferred to promote without them",
		strings.Join(sites, ", "), target, ahead, ahead.Count(), target, target, strings.Join(sites, ", ")))
}

// acknowledgersBlock is the decision that keeps target read-only while
// unread lists sites that may hold acknowledged commits it lacks.
func acknowledgersBlock(want Kind, target string, unread []string) Decision {
	return blocked(want, v1alpha1.ReasonAcknowledgerUnread, target, fmt.Sprintf(
		"%s may hold commits acknowledged under dataDurability required that %s lacks, and cannot be read; "+
			"%s stays read-only until %s answers (set spec.mysql.semiSync.dataDurability: preferred to promote without them)",
		strings.Join(unread, ", "), target, target, strings.Join(unread, ", ")))
}
