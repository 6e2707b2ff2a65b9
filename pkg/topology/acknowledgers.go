package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
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

// acknowledgersBlock is the decision that keeps target read-only while
// unread lists sites that may hold acknowledged commits it lacks.
func acknowledgersBlock(want Kind, target string, unread []string) Decision {
	return blocked(want, v1alpha1.ReasonAcknowledgerUnread, target, fmt.Sprintf(
		"%s may hold commits acknowledged under dataDurability required that %s lacks, and cannot be read; "+
			"%s stays read-only until %s answers (set spec.mysql.semiSync.dataDurability: preferred to promote without them)",
		strings.Join(unread, ", "), target, target, strings.Join(unread, ", ")))
}
