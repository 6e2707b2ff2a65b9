package topology

import (
	"fmt"
	"slices"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// What the emergency failover sequence (pkg/failover) does with a decision
// is decided here, in the Decision's Start, Retarget, Promote and
// PromoteOnceFenced fields and Decision.Promotes; the sequence only reads
// them.

// withSequence fills the fields the emergency failover sequence reads.
//   - Start: a Failover, or one blocked only because a site is not yet
//     confirmed fenced; its intent is then published so that sidecars
//     fence by view.
//   - Retarget: the failover in flight has not made its target writable
//     yet, and Start names another target (the first one became ineligible).
//   - Promote: the target may be made writable now.
//   - PromoteOnceFenced: the one site that, confirmed unable to write on
//     this pass (fenced by SQL, or past its lease deadline now that the
//     intent is published), lets the target be made writable.
func withSequence(in Input, d Decision) Decision {
	blockedOnFence := d.Kind == KindFailoverBlocked && d.Reason == v1alpha1.ReasonFenceUnconfirmed
	d.Start = d.Kind == KindFailover || (blockedOnFence && d.Wanted == KindFailover && d.Target != "")
	d.Retarget = d.Start && in.InFlight != nil && beforePromotion(in.InFlight.Step) && d.Target != in.InFlight.To
	if d.Retarget {
		d.Abandon = abandoned(in, d.Target)
	}
	d.Promote = d.Kind == KindFailover
	if blockedOnFence && len(d.Unconfirmed) == 1 {
		d.PromoteOnceFenced = d.Unconfirmed[0]
	}
	return d
}

// abandoned lists the sites a retarget to target leaves behind that may
// have written as this failover's target: those the in-flight intent
// already lists, and its target when a promotion whose answer was lost may
// have made it writable. A target seen writable is never retargeted away
// from (beforePromotion), so maybe-writable is the only way it wrote. A
// listed site the failover moves back to stays listed: what it wrote
// while abandoned is still the history's, though it is fenced since.
func abandoned(in Input, target string) []string {
	var out []string
	for _, name := range in.InFlight.Abandoned {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if old, ok := in.Site(in.InFlight.To); ok && old.MaybeWritable && old.Name != target && !slices.Contains(out, old.Name) {
		out = append(out, old.Name)
	}
	return out
}

// beforePromotion reports whether a failover at step has not made its
// target writable yet.
func beforePromotion(step v1alpha1.FailoverStep) bool {
	return step == v1alpha1.StepIntent || step == v1alpha1.StepFencing || step == v1alpha1.StepPromoting
}

// Promotes reports whether the emergency failover from one site to another
// may make to writable on this pass: the decision asks for exactly this
// failover (Promote), or the only site it found unconfirmed is from and
// fromConfirmed says from is confirmed unable to write now. Otherwise it
// says why not.
func (d Decision) Promotes(from, to string, fromConfirmed bool) (bool, string) {
	switch {
	case d.Target != to:
		return false, fmt.Sprintf("decision %s does not promote %s: %s", d, to, d.Message)
	case d.Promote:
		return true, ""
	case fromConfirmed && from != "" && d.PromoteOnceFenced == from:
		return true, ""
	}
	return false, d.Message
}
