package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Binlog salvage: during an emergency failover, once the old primary is
// confirmed unable to write and before the target is made writable, the
// target may take what the old primary executed and it lacks, by
// replicating from the old primary up to the old primary's executed set.
// DecideSalvage says whether, and which tail; pkg/failover executes it.

// SalvageAction is what DecideSalvage asks for.
type SalvageAction string

// The salvage actions.
const (
	// SalvageOff: spec.failover.salvageTimeout is 0s; nothing is said.
	SalvageOff SalvageAction = "Off"
	// SalvageSkip: no salvage now (the old primary is not readable, or the
	// time ran out); the failover goes on, and what the target lacks is
	// counted as lost once the old primary is read.
	SalvageSkip SalvageAction = "Skip"
	// SalvageRead: read both servers' executed sets (and the old primary's
	// fence) now, then decide again with them.
	SalvageRead SalvageAction = "Read"
	// SalvageNothing: the target already holds everything the old primary
	// executed.
	SalvageNothing SalvageAction = "Nothing"
	// SalvageApply: replicate from the old primary until the target's
	// executed set covers Until; Tail is what it is expected to bring.
	SalvageApply SalvageAction = "Apply"
	// SalvageRefuse: the old primary is readable but its tail must not be
	// taken (it would diverge, or it holds discarded history).
	SalvageRefuse SalvageAction = "Refuse"
)

// SalvageReadout is one fresh read of the two servers, taken right before
// the decision that uses it.
type SalvageReadout struct {
	// Failed, when not empty, says why the servers could not be read
	// (within the budget): the salvage is skipped.
	Failed string
	// SourceFenced is true when the old primary refused application
	// writes when read (read_only, MySQL super_read_only).
	SourceFenced bool
	// TargetFenced is the same of the target, which must still be
	// read-only: a promotion whose answer was lost may have taken effect.
	TargetFenced bool
	// Source is the old primary's executed set; Target the target's.
	Source gtid.Set
	Target gtid.Set
}

// SalvageAttempt is one salvage question for the failover in flight in
// the Input (Input.InFlight names From and To).
type SalvageAttempt struct {
	// Timeout is spec.failover.salvageTimeout; zero or less turns it off.
	Timeout time.Duration
	// Started is when this failover first considered salvage; the
	// attempt, over every pass, ends at Started+Timeout.
	Started time.Time
	Now     time.Time
	// Read is the fresh readout; nil before the servers were read.
	Read *SalvageReadout
	// SQLReached is true when the operator's SQL fence reached the old
	// primary on this very pass though its probes show it unreachable:
	// it answers, so it is read (within the read's short bound).
	SQLReached bool
}

// Salvage is DecideSalvage's answer.
type Salvage struct {
	Action SalvageAction
	// Tail is what the target lacks of the old primary's executed set.
	Tail gtid.Set
	// Until is the old primary's executed set: replication stops there.
	Until gtid.Set
	// Budget is what is left of the timeout (Apply, Read).
	Budget time.Duration
	// Reason is the v1alpha1 Event reason to record ("" for none).
	Reason string
	// Message explains the answer to a person.
	Message string
}

// DecideSalvage decides one salvage step of the emergency failover in
// flight in in (Judge's output: sites' Diverged marks set). It is pure.
//
// In order: off; out of time; the old primary's probe on this pass not
// answered (it is read-only, or held unreachable by the debouncer while it
// recovers, and not Stale) and the pass's SQL fence not reaching it either
// (it is never waited for: down, unknown, writable or maybe writable all
// skip at once, with no Event); the target possibly writable already (a
// promotion whose answer was lost); the old primary flagged diverged; not
// read yet (read); the read failed; the target not read-only when read;
// the old primary not fenced when read (never a source while it may
// write); the target holding transactions the old primary lacks (the tail
// would be applied on top of a different history: refused); nothing
// missing; the tail holding transactions outside the authority's history
// or inside a failover's lost set (refused); else apply.
func DecideSalvage(in Input, a SalvageAttempt) Salvage {
	if a.Timeout <= 0 {
		return Salvage{Action: SalvageOff, Message: "salvage is off (failover.salvageTimeout 0s)"}
	}
	if in.InFlight == nil || in.InFlight.From == in.InFlight.To {
		return Salvage{Action: SalvageOff, Message: "no failover from another site in flight"}
	}
	from, to := in.InFlight.From, in.InFlight.To
	left := a.Started.Add(a.Timeout).Sub(a.Now)
	if left <= 0 {
		return skip(fmt.Sprintf("salvage from %s: its %s ran out", from, a.Timeout))
	}
	src, ok := in.Site(from)
	if why := unreadable(src, ok, a.SQLReached); why != "" {
		// Not an Event: a failover from a site that does not answer is
		// what it was before salvage existed.
		return Salvage{Action: SalvageSkip, Message: fmt.Sprintf(
			"salvage from %s: %s; what %s lacks is counted as lost once %s is read", from, why, to, from)}
	}
	if tgt, ok := in.Site(to); !ok || tgt.MaybeWritable || tgt.State == v1alpha1.StateWritable {
		return skip(fmt.Sprintf("salvage into %s: it may be writable already (a promotion whose answer was lost)", to))
	}
	if src.Diverged {
		return refuse(fmt.Sprintf("salvage from %s refused: it holds transactions outside the group's history", from))
	}
	if a.Read == nil {
		return Salvage{Action: SalvageRead, Budget: left, Message: fmt.Sprintf("read %s and %s", from, to)}
	}
	return decideTail(in, src, to, *a.Read, left)
}

// unreadable says why the old primary cannot be a salvage source on this
// pass; "" when it was observed read-only by a probe of this snapshot.
func unreadable(src SiteView, known, sqlReached bool) string {
	switch {
	case !known:
		return "it is not a site of the group"
	case src.MaybeWritable:
		return "it may have been made writable since it was fenced"
	case sqlReached && src.State == v1alpha1.StateUnreachable:
		return ""
	case src.State != v1alpha1.StateReadOnly && src.State != v1alpha1.StateUnreachable:
		return fmt.Sprintf("it is %s", src.State)
	case src.Stale || src.Executed.IsEmpty():
		return "its last probe did not answer"
	}
	// Read-only, or held unreachable by the debouncer while it recovers
	// (recoveryThreshold answers) with this pass's probe answered.
	return ""
}

// decideTail weighs the fresh readout.
func decideTail(in Input, src SiteView, to string, r SalvageReadout, left time.Duration) Salvage {
	from := src.Name
	if r.Failed != "" {
		return skip(fmt.Sprintf("salvage from %s: %s; what %s lacks is counted as lost once %s is read",
			from, r.Failed, to, from))
	}
	if !r.TargetFenced {
		return skip(fmt.Sprintf("salvage into %s: it was not read-only when read", to))
	}
	if !r.SourceFenced {
		return skip(fmt.Sprintf("salvage from %s: it was not read-only when read; it is never a source while it may write", from))
	}
	// Lacks, not Subtract: a MariaDB set names seqs by a guess that differs
	// between a history and its prefix (gtid.Lacks).
	if extra := gtid.Lacks(r.Source, r.Target); !extra.IsEmpty() {
		return refuse(fmt.Sprintf("salvage from %s refused: %s holds %s (%d transactions) that %s lacks; "+
			"applying %s's tail on top would diverge", from, to, extra, extra.Count(), from, from))
	}
	tail := gtid.Lacks(r.Target, r.Source)
	if tail.IsEmpty() {
		return Salvage{Action: SalvageNothing, Until: r.Source,
			Message: fmt.Sprintf("%s already holds everything %s executed", to, from)}
	}
	if bad := discarded(in, src, r); !bad.IsEmpty() {
		return refuse(fmt.Sprintf("salvage from %s refused: its tail holds %s (%d transactions) that the "+
			"group's history discarded", from, bad, bad.Count()))
	}
	return Salvage{Action: SalvageApply, Tail: tail, Until: r.Source, Budget: left,
		Reason: v1alpha1.EventTailSalvaged,
		Message: fmt.Sprintf("salvage %s (%d transactions) from %s into %s, within %s",
			tail, tail.Count(), from, to, left.Round(time.Millisecond))}
}

// discarded returns what the old primary's readout holds, and the target
// does not, that is outside the authority's history (historyErrant) or
// inside any failover's lost set, whoever wrote it: the salvage would
// bring it back.
func discarded(in Input, src SiteView, r SalvageReadout) gtid.Set {
	src.Executed = r.Source
	writers, _ := historyWriters(in, authority(in))
	errant := historyErrant(in, src, writers, abandonedKnown(in))
	var lost gtid.Set
	for _, h := range in.History {
		lost = lost.Union(h.Lost)
	}
	errant = errant.Union(gtid.Cover(r.Source).Intersect(lost))
	return gtid.LacksPart(r.Target, errant)
}

func skip(msg string) Salvage {
	return Salvage{Action: SalvageSkip, Reason: v1alpha1.EventSalvageSkipped, Message: msg}
}

func refuse(msg string) Salvage {
	return Salvage{Action: SalvageRefuse, Reason: v1alpha1.EventSalvageRefused, Message: msg}
}
