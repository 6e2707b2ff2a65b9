package topology

import (
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Kind is what a Decision asks for.
type Kind string

// The decision kinds.
const (
	// KindHealthy: the active site writes, every peer replicates in time.
	KindHealthy Kind = "Healthy"
	// KindDegraded: the active site writes, but a peer is down, unknown,
	// diverged, lagging or not replicating. Reason says which.
	KindDegraded Kind = "Degraded"
	// KindFenceExtraWriters: a site other than the active site is writable.
	// Fence every site in Fence before doing anything else.
	KindFenceExtraWriters Kind = "FenceExtraWriters"
	// KindSplitBrain: the authority was lost (no active site) and several sites
	// write. Target is the winner (failover history first, then site priority);
	// persist it as the active site and fence every site in Fence.
	KindSplitBrain Kind = "SplitBrain"
	// KindFailover: make Target writable. Every other site is read-only or
	// confirmed fenced. Without an intent in flight, persist and publish one first.
	KindFailover Kind = "Failover"
	// KindFailoverBlocked: a failover (or re-assertion, see Wanted) is needed
	// but may not run now. Reason says why.
	KindFailoverBlocked Kind = "FailoverBlocked"
	// KindNoPrimary: every site is read-only or confirmed fenced, and the active
	// site is reachable: re-assert it (make Target writable). Never elect another.
	KindNoPrimary Kind = "NoPrimary"
	// KindTotalLoss: every site is unreachable.
	KindTotalLoss Kind = "TotalLoss"
)

// Divergence names transactions a site has that the chosen site lacks.
type Divergence struct {
	Site  string
	GTIDs gtid.Set
}

// Decision is Decide's answer: exactly one kind, with a reason.
type Decision struct {
	Kind Kind
	// Reason is a v1alpha1 condition reason constant.
	Reason string
	// Active is the authoritative site Decide used: Input.ActiveSite, or the
	// site it resolved when that was empty.
	Active string
	// Target is the site to keep (fence kinds), to make writable (Failover,
	// NoPrimary) or the candidate a blocked failover would promote.
	Target string
	// Fence lists the sites to fence, in spec order.
	Fence []string
	// Unconfirmed lists the sites that block a promotion because they are
	// neither read-only nor confirmed fenced (ReasonFenceUnconfirmed).
	Unconfirmed []string
	// Divergent names divergent transactions, per site.
	Divergent []Divergence
	// Errant names, whatever the kind, the sites seen holding transactions
	// outside the authority's history (see judgeHistory). The caller marks
	// them diverged: they never rejoin and are never made writable.
	Errant []Divergence
	// AdminFence is true when the active site, fenced by an administrator
	// while it still writes, is to be fenced by SQL (Fence names it); the
	// decision is then FailoverBlocked/AdminFenced, and nothing else is done.
	AdminFence bool
	// Start is true when the emergency failover sequence is to run toward
	// Target: begin an intent when none is in flight (sequence.go).
	Start bool
	// Retarget is true when the failover in flight (Input.InFlight) is to
	// be replaced, before its target was made writable, by a new one from
	// the same old primary to Target.
	Retarget bool
	// Abandon lists, with Retarget, the sites the new intent records as
	// abandoned (Intent.Abandoned): the replaced intent's, and its target
	// when its promotion may have taken effect (maybe-writable). Their
	// writes count as the history's until the new target is made writable
	// (abandonedWriters).
	Abandon []string
	// AbandonedWrote is what the in-flight failover's abandoned targets
	// are known to have written (abandonedKnown), to be kept in the intent
	// (status.failover.abandonedGtidSet); empty when none is listed.
	AbandonedWrote gtid.Set
	// Promote is true when the emergency sequence may make Target writable
	// now: every other site is read-only or confirmed fenced.
	Promote bool
	// PromoteOnceFenced names, when Target is blocked only by that one site
	// not being confirmed fenced, the site whose confirmation on this pass
	// (a SQL fence, a lease deadline passed once the intent is published)
	// lets Target be made writable (see Promotes).
	PromoteOnceFenced string
	// Wanted is, for FailoverBlocked, the kind that was blocked.
	Wanted Kind
	// RetryAfter is, for a cooldown block, when the cooldown ends.
	RetryAfter time.Time
	// Message explains the decision to a person.
	Message string
}

func (d Decision) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s", d.Kind, d.Reason)
	if d.Target != "" {
		fmt.Fprintf(&b, " target=%s", d.Target)
	}
	if len(d.Fence) > 0 {
		fmt.Fprintf(&b, " fence=%s", strings.Join(d.Fence, ","))
	}
	if len(d.Unconfirmed) > 0 {
		fmt.Fprintf(&b, " unconfirmed=%s", strings.Join(d.Unconfirmed, ","))
	}
	for _, dv := range d.Divergent {
		fmt.Fprintf(&b, " divergent[%s]=%s", dv.Site, dv.GTIDs)
	}
	for _, dv := range d.Errant {
		fmt.Fprintf(&b, " errant[%s]=%s", dv.Site, dv.GTIDs)
	}
	if d.Wanted != "" {
		fmt.Fprintf(&b, " wanted=%s", d.Wanted)
	}
	return b.String()
}

// MakesWritable returns the site this decision makes writable, if any.
func (d Decision) MakesWritable() (string, bool) {
	if d.Kind == KindFailover || d.Kind == KindNoPrimary {
		return d.Target, true
	}
	return "", false
}
