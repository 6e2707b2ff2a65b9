package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Decide looks at one snapshot of the group and returns exactly one Decision.
// It is pure: the same Input always gives the same Decision. It errs only on
// malformed input (see Input.Validate).
//
// In order: extra writers are fenced first (FenceExtraWriters, or SplitBrain
// when no active site is recorded); then every site unreachable is TotalLoss;
// then the active site's state picks the branch: writable gives Healthy or
// Degraded (or, fenced by an administrator, the fence of it), read-only gives NoPrimary (or the promotion of a failover in
// flight), unknown waits (Degraded/NotReady), and unreachable leads to
// Failover or FailoverBlocked.
//
// Before any of that, a site that never answered shows unknown rather than
// unreachable (ShownState), and every site holding transactions outside the
// authority's history is flagged diverged (judgeHistory) and named in
// Decision.Errant, whatever the decision.
func Decide(in Input) (Decision, error) {
	if err := in.Validate(); err != nil {
		return Decision{}, fmt.Errorf("decide: %w", err)
	}
	in = shown(in)
	active := authority(in)
	in, errant := judgeHistory(in, active)
	d := withSequence(in, decide(in, active))
	d.Errant = errant
	d.AbandonedWrote = abandonedKnown(in)
	return d, nil
}

func decide(in Input, active string) Decision {
	if d, ok := decideWriters(in, active); ok {
		return d
	}
	if allUnreachable(in) {
		return Decision{Kind: KindTotalLoss, Reason: v1alpha1.ReasonTotalLoss, Active: active,
			Message: "every site is unreachable"}
	}
	a, _ := in.Site(active)
	var d Decision
	switch a.State {
	case v1alpha1.StateWritable:
		d = decideHealth(in, a)
	case v1alpha1.StateReadOnly:
		d = decideReadOnlyActive(in, a)
	case v1alpha1.StateUnknown:
		d = notObserved(a)
	default:
		d = decideFailover(in, a)
	}
	d.Active = active
	return d
}

// authority is the site that wins when sites disagree: status.activeSite; when
// that is empty, the newest failover target that is writable, then the
// highest-priority writable site, then the newest failover target, then the
// highest-priority primary candidate.
func authority(in Input) string {
	if in.ActiveSite != "" {
		return in.ActiveSite
	}
	writers := names(in.Sites, func(s SiteView) bool { return s.State == v1alpha1.StateWritable })
	for i := len(in.History) - 1; i >= 0; i-- {
		if slices.Contains(writers, in.History[i].To) {
			return in.History[i].To
		}
	}
	if len(writers) > 0 {
		return writers[0]
	}
	for i := len(in.History) - 1; i >= 0; i-- {
		if _, ok := in.Site(in.History[i].To); ok {
			return in.History[i].To
		}
	}
	for _, s := range in.Sites {
		if s.candidateRole() {
			return s.Name
		}
	}
	return in.Sites[0].Name
}

// decideWriters fences every writer but the authority, and every site but
// the authority that may have been made writable (MaybeWritable) and answers.
func decideWriters(in Input, active string) (Decision, bool) {
	writers := names(in.Sites, func(s SiteView) bool { return s.State == v1alpha1.StateWritable })
	extras := names(in.Sites, func(s SiteView) bool { return s.mayWrite() && s.Name != active })
	if len(extras) == 0 {
		return Decision{}, false
	}
	d := Decision{Kind: KindFenceExtraWriters, Reason: v1alpha1.ReasonStaleWriter,
		Active: active, Target: active, Fence: extras}
	switch {
	case len(writers) > 1:
		d.Reason = v1alpha1.ReasonSplitBrain
	case !slices.ContainsFunc(extras, func(n string) bool { return slices.Contains(writers, n) }):
		d.Reason = v1alpha1.ReasonMaybeWritable
		d.Message = fmt.Sprintf("%s may be writable (an operation making it writable had no clear outcome) "+
			"besides active site %s: fence first", strings.Join(extras, ", "), active)
		return d, true
	}
	if in.ActiveSite == "" {
		d.Kind = KindSplitBrain
		d.Message = fmt.Sprintf("no active site recorded and %s write: keeping %s (failover history, then priority)",
			strings.Join(writers, ", "), active)
		return d, true
	}
	d.Message = fmt.Sprintf("%s writable besides active site %s: fence first", strings.Join(extras, ", "), active)
	return d, true
}

func allUnreachable(in Input) bool {
	for _, s := range in.Sites {
		if s.State != v1alpha1.StateUnreachable {
			return false
		}
	}
	return true
}

// decideReadOnlyActive handles a reachable active site that does not write:
// the promotion of an emergency failover in flight, or a re-assertion. A
// failover target that is no longer eligible, or no longer holds every
// eligible site's transactions, is replaced as if it had failed.
func decideReadOnlyActive(in Input, a SiteView) Decision {
	if in.InFlight != nil && in.InFlight.To == a.Name {
		if !Eligible(a) || !holdsAll(a, in.Sites) {
			return decideFailover(in, a)
		}
		if unread := unreadAcknowledgers(in, in.InFlight.From, a.Name); len(unread) > 0 {
			return acknowledgersBlock(KindFailover, a.Name, unread)
		}
		if sites, ahead := unpromotableAhead(in, in.InFlight.From, a); len(sites) > 0 {
			return unpromotableBlock(KindFailover, a.Name, sites, ahead)
		}
		return gatePromotion(in, a.Name, KindFailover, v1alpha1.ReasonFailoverRunning)
	}
	if a.AdminFenced || in.PlannedInFlight {
		// Neither re-asserted nor replaced: an administrator or a planned failover holds it.
		return gatePromotion(in, a.Name, KindNoPrimary, v1alpha1.ReasonNoPrimary)
	}
	if a.Stale {
		return staleActive(a)
	}
	if why := reassertUnsafe(in, a); why != "" {
		return failoverInstead(in, a, why)
	}
	return gatePromotion(in, a.Name, KindNoPrimary, v1alpha1.ReasonNoPrimary)
}

// decideFailover handles an unreachable active site.
func decideFailover(in Input, a SiteView) Decision {
	if in.PlannedInFlight {
		return blocked(KindFailover, v1alpha1.ReasonPlannedInFlight, "", "a planned failover holds the topology")
	}
	if last := in.LastFailover(); in.InFlight == nil && last != nil && in.Now.Before(last.Time.Add(in.Cooldown)) {
		d := blocked(KindFailover, v1alpha1.ReasonCooldown, "",
			fmt.Sprintf("active site %s unreachable, but the last failover was at %s", a.Name, last.Time.Format("15:04:05")))
		d.RetryAfter = last.Time.Add(in.Cooldown)
		return d
	}
	c := SelectCandidate(in.Sites)
	switch {
	case c.Site == "" && len(c.Divergent) == 0:
		return blocked(KindFailover, v1alpha1.ReasonNoCandidate, "",
			fmt.Sprintf("active site %s unreachable and no primary-candidate site is reachable, read-only, unfenced and not diverged%s",
				a.Name, excluded(in.Sites)))
	case c.Site == "":
		d := blocked(KindFailover, v1alpha1.ReasonDivergence, c.Freshest,
			fmt.Sprintf("promoting %s, the freshest candidate, would lose other candidates' transactions", c.Freshest))
		d.Divergent = c.Divergent
		return d
	}
	from := a.Name // the site whose acknowledged commits are at stake
	if in.InFlight != nil {
		from = in.InFlight.From // a is the in-flight target, lost before its promotion
	}
	if unread := unreadAcknowledgers(in, from, c.Site); len(unread) > 0 {
		return acknowledgersBlock(KindFailover, c.Site, unread)
	}
	if t, ok := in.Site(c.Site); ok {
		if sites, ahead := unpromotableAhead(in, from, t); len(sites) > 0 {
			return unpromotableBlock(KindFailover, c.Site, sites, ahead)
		}
	}
	return gatePromotion(in, c.Site, KindFailover, v1alpha1.ReasonPrimaryUnreachable)
}

// gatePromotion returns a decision of kind want making target writable, or
// the reason it may not happen now.
func gatePromotion(in Input, target string, want Kind, reason string) Decision {
	if in.PlannedInFlight {
		return blocked(want, v1alpha1.ReasonPlannedInFlight, target, "a planned failover holds the topology")
	}
	if t, _ := in.Site(target); t.AdminFenced {
		return blocked(want, v1alpha1.ReasonAdminFenced, target,
			fmt.Sprintf("%s is fenced by an administrator", target))
	}
	unconfirmed := names(in.Sites, func(s SiteView) bool { return s.Name != target && !s.safe() })
	if len(unconfirmed) > 0 {
		d := blocked(want, v1alpha1.ReasonFenceUnconfirmed, target,
			fmt.Sprintf("%s not confirmed unable to write; %s stays read-only", strings.Join(unconfirmed, ", "), target))
		d.Unconfirmed = unconfirmed
		return d
	}
	return Decision{Kind: want, Reason: reason, Target: target,
		Message: fmt.Sprintf("make %s writable: every other site is read-only or confirmed fenced", target)}
}

func blocked(want Kind, reason, target, msg string) Decision {
	return Decision{Kind: KindFailoverBlocked, Reason: reason, Wanted: want, Target: target, Message: msg}
}

func names(sites []SiteView, keep func(SiteView) bool) []string {
	var out []string
	for _, s := range sites {
		if keep(s) {
			out = append(out, s.Name)
		}
	}
	return out
}
