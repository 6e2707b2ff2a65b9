package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Reclone requests (v1alpha1.RecloneSiteAnnotation) replace a site's data
// with a clone of a healthy site's. The request names the site and proves
// the person looked at it: for a diverged site, the first characters of its
// status.sites[].divergentGtid; for any other site, the group's name.

// MinReclonePrefix is how many characters of divergentGtid a request for
// a diverged site must repeat (all of them when it is shorter).
const MinReclonePrefix = 8

// maxRecloneValue bounds the annotation value read; longer is refused.
const maxRecloneValue = 1024

// confirmPrefix starts the proof of a request for a site that is not diverged.
const confirmPrefix = "confirm="

// cancelProof asks for a running reclone to stop (<site>:cancel). It is
// never a GTID prefix: a MySQL uuid is hexadecimal and a MariaDB GTID is
// digits and dashes.
const cancelProof = "cancel"

// RecloneRequest is a parsed reclone-site annotation value.
type RecloneRequest struct {
	// Site is the site to clone over.
	Site string
	// Prefix is the repeated start of the site's divergentGtid; empty in
	// the confirm form.
	Prefix string
	// ConfirmGroup is the group named by the confirm form; empty otherwise.
	ConfirmGroup string
	// Cancel asks for the site's running reclone to stop (<site>:cancel).
	Cancel bool
}

// ParseRecloneRequest reads <site>:<prefix> or <site>:confirm=<group>. The
// site is everything up to the first colon (site names hold none; a MySQL
// GTID prefix may). Nothing is trimmed or case-folded; a value with control
// characters, an empty part or over maxRecloneValue bytes is refused with
// ErrBadRecloneRequest.
func ParseRecloneRequest(value string) (RecloneRequest, error) {
	if len(value) > maxRecloneValue {
		return RecloneRequest{}, fmt.Errorf("%w: longer than %d bytes", ErrBadRecloneRequest, maxRecloneValue)
	}
	for _, r := range value {
		if r < 0x21 || r == 0x7f || r > 0x7e {
			return RecloneRequest{}, fmt.Errorf("%w: holds a space, control or non-ASCII character", ErrBadRecloneRequest)
		}
	}
	site, proof, ok := strings.Cut(value, ":")
	switch {
	case !ok:
		return RecloneRequest{}, fmt.Errorf("%w: want <site>:<divergentGtid prefix> or <site>:confirm=<group>", ErrBadRecloneRequest)
	case site == "":
		return RecloneRequest{}, fmt.Errorf("%w: no site before the colon", ErrBadRecloneRequest)
	case proof == "":
		return RecloneRequest{}, fmt.Errorf("%w: nothing after %q", ErrBadRecloneRequest, site+":")
	}
	if proof == cancelProof {
		return RecloneRequest{Site: site, Cancel: true}, nil
	}
	if group, ok := strings.CutPrefix(proof, confirmPrefix); ok {
		if group == "" {
			return RecloneRequest{}, fmt.Errorf("%w: confirm= names no group", ErrBadRecloneRequest)
		}
		return RecloneRequest{Site: site, ConfirmGroup: group}, nil
	}
	return RecloneRequest{Site: site, Prefix: proof}, nil
}

// RecloneAsk is everything besides the Input that judges a request.
type RecloneAsk struct {
	// Group is the group's name (the confirm form must repeat it).
	Group string
	// Value is the annotation's value.
	Value string
	// Divergent is status.sites[].divergentGtid by site.
	Divergent map[string]string
	// Running names the site whose reclone is in progress, "" when none;
	// RunningPhase is its phase.
	Running      string
	RunningPhase v1alpha1.RecoveryPhase
	// Updating is true while the ordered update rolls the sites.
	Updating bool
	// Decided is the pass's Decision kind; a request is judged only while
	// the group serves (Healthy or Degraded), never while a failover is
	// wanted or blocked. Empty: not known, not checked.
	Decided Kind
	// LossUnread are the sites whose part of the last failover's loss is
	// still to be read (its old primary, its abandoned targets): their
	// data is not cloned over before it is counted.
	LossUnread []string
}

// RecloneSettled reports whether a group whose pass decided kind may
// start or move a reclone on: it serves, with nothing to fail over or fence.
func RecloneSettled(kind Kind) bool { return kind == KindHealthy || kind == KindDegraded }

// RecloneVerdict answers a request: accepted when Reason is empty.
type RecloneVerdict struct {
	Request RecloneRequest
	// Donor is the site to clone from, when accepted.
	Donor Donor
	// Reason is a CamelCase word (v1alpha1's Reason* constants) saying why
	// the request is refused; empty when accepted.
	Reason  string
	Message string
}

// Accepted reports whether the request may run.
func (v RecloneVerdict) Accepted() bool { return v.Reason == "" }

// DecideReclone judges a reclone request, in the order a person would want
// to hear about problems: the value, the site, the active site, operations
// in progress (a failover of either kind, another reclone, the ordered
// update), a former primary whose failover loss is not counted yet, the
// proof, and last a healthy donor (CloneDonor).
func DecideReclone(in Input, ask RecloneAsk) RecloneVerdict {
	req, err := ParseRecloneRequest(ask.Value)
	if err != nil {
		return RecloneVerdict{Reason: v1alpha1.ReasonInvalidRequest, Message: err.Error()}
	}
	v := RecloneVerdict{Request: req}
	refuse := func(reason, format string, args ...any) RecloneVerdict {
		v.Reason, v.Message = reason, fmt.Sprintf(format, args...)
		return v
	}
	if _, ok := in.Site(req.Site); !ok {
		return refuse(v1alpha1.ReasonUnknownSite, "%q is not a site of the group", req.Site)
	}
	if req.Cancel {
		return decideCancel(v, ask)
	}
	switch {
	case req.Site == in.ActiveSite:
		return refuse(v1alpha1.ReasonRecloneActiveSite, "%s is the active site; its data is never cloned over", req.Site)
	case in.InFlight != nil:
		return refuse(v1alpha1.ReasonConcurrentOperation, "an emergency failover %s -> %s is in flight", in.InFlight.From, in.InFlight.To)
	case in.PlannedInFlight:
		return refuse(v1alpha1.ReasonConcurrentOperation, "a planned failover is in flight")
	case ask.Running != "":
		return refuse(v1alpha1.ReasonConcurrentOperation, "the reclone of %s is in progress; one runs at a time", ask.Running)
	case ask.Updating:
		return refuse(v1alpha1.ReasonConcurrentOperation, "an ordered update is in progress")
	case slices.Contains(ask.LossUnread, req.Site):
		return refuse(v1alpha1.ReasonRecloneLossUncounted,
			"%s holds transactions the last failover lost that are not counted yet: its data is read first (once it "+
				"answers read-only), then it may be recloned", req.Site)
	case ask.Decided != "" && !RecloneSettled(ask.Decided):
		return refuse(v1alpha1.ReasonConcurrentOperation, "the group does not serve normally (%s): a failover or a fence comes first", ask.Decided)
	}
	if why := proofWrong(req, ask); why != "" {
		return refuse(v1alpha1.ReasonRecloneWrongPrefix, "%s", why)
	}
	donor, err := CloneDonor(in, req.Site)
	if err != nil {
		reason := v1alpha1.ReasonRecloneNoDonor
		if errors.Is(err, ErrCloneActive) {
			reason = v1alpha1.ReasonRecloneActiveSite
		}
		return refuse(reason, "%s", err.Error())
	}
	v.Donor = donor
	return v
}

// proofWrong is why the request's proof does not fit its site, "" when it does.
func proofWrong(req RecloneRequest, ask RecloneAsk) string {
	div := ask.Divergent[req.Site]
	if div == "" {
		switch {
		case req.ConfirmGroup == "":
			return fmt.Sprintf("%s is not diverged: ask with %s:confirm=%s", req.Site, req.Site, ask.Group)
		case req.ConfirmGroup != ask.Group:
			return fmt.Sprintf("confirm= names %q, not this group %q", req.ConfirmGroup, ask.Group)
		}
		return ""
	}
	need := min(MinReclonePrefix, len(div))
	switch {
	case req.Prefix == "":
		return fmt.Sprintf("%s is diverged: repeat at least the first %d characters of its divergentGtid, not confirm=", req.Site, need)
	case len(req.Prefix) < need:
		return fmt.Sprintf("the prefix %q is shorter than %d characters", req.Prefix, need)
	case !strings.HasPrefix(div, req.Prefix):
		return fmt.Sprintf("%q does not start %s's divergentGtid", req.Prefix, req.Site)
	}
	return ""
}

// RecloneCaughtUp reports whether a recloned site has rejoined: observed
// now, read-only, replicating without error, holding target (the active
// site's set when catching up began) and nothing the active site lacks.
// Otherwise it says what it waits for. A fresh MariaDB clone shows an
// empty executed set until it replicates its first transaction, so it
// waits for one (docs/recovery.md).
func RecloneCaughtUp(in Input, site string, target gtid.Set) (bool, string) {
	s, ok := in.Site(site)
	if !ok {
		return false, "no such site"
	}
	a, ok := in.Site(in.ActiveSite)
	switch {
	case !ok:
		return false, "no active site"
	case s.Stale || s.State != v1alpha1.StateReadOnly:
		return false, fmt.Sprintf("%s is %s, not observed read-only", site, s.State)
	case !s.Replication.Running || s.Replication.Error != "" || s.Replication.SQLError:
		return false, site + " does not replicate yet"
	case !gtid.Lacks(s.Executed, target).IsEmpty():
		return false, fmt.Sprintf("%s lacks %s of the primary's set", site, gtid.Lacks(s.Executed, target))
	case !withoutSource(gtid.Lacks(a.Executed, s.Executed), a.ServerID).IsEmpty():
		return false, fmt.Sprintf("%s holds %s the active site lacks", site, gtid.Lacks(a.Executed, s.Executed))
	}
	return true, ""
}

// RecoveryWaiting lists, in spec order, the diverged sites no reclone is
// running for: each waits for a person (condition Degraded, RecoveryBlocked).
func RecoveryWaiting(order []string, divergent map[string]string, running map[string]bool) []string {
	var out []string
	for _, s := range order {
		if divergent[s] != "" && !running[s] {
			out = append(out, s)
		}
	}
	return out
}

// RecloneMayWipe says why site's data may not be replaced yet, "" when it
// may: what it holds or received (but its divergent set) must be held by
// another primary-candidate replica that is observed now, not held and not
// diverged, so that no commit it acknowledged leaves the group with its
// data. With no such replica (a two-site group, or the others down) the
// active site, observed now, must hold it: it alone keeps the group's data
// during the reclone.
// The caller stops the site's replication first, so what it holds no
// longer grows. A site not observed now (down, or its probe stale) may
// hold more than its last known set, up to all the active site holds:
// it is judged on both, never on an empty or old set alone.
func RecloneMayWipe(in Input, site string, divergent gtid.Set) string {
	s, ok := in.Site(site)
	if !ok {
		return "no such site"
	}
	held := s.Executed.Union(s.Replication.Retrieved)
	if !s.reachable() || s.Stale {
		if a, ok := in.Site(in.ActiveSite); ok {
			held = held.Union(a.Executed)
		}
	}
	held = held.Subtract(divergent)
	var others gtid.Set
	copies := 0
	for _, o := range in.Sites {
		if o.Name == site || o.Name == in.ActiveSite || !o.candidateRole() || o.AdminFenced || o.Diverged ||
			!o.reachable() || o.Stale {
			continue
		}
		others = others.Union(o.Executed)
		copies++
	}
	if copies == 0 {
		return mayWipeOnActive(in, site, held)
	}
	if miss := gtid.Lacks(others, held); !miss.IsEmpty() {
		return fmt.Sprintf("%s holds %s that no other replica holds yet", site, miss)
	}
	return ""
}

// mayWipeOnActive is RecloneMayWipe with no other replica to hold what site
// holds: the active site, observed now, must hold all of it.
func mayWipeOnActive(in Input, site string, held gtid.Set) string {
	a, ok := in.Site(in.ActiveSite)
	switch {
	case !ok || !a.reachable() || a.Stale:
		return fmt.Sprintf("no other replica may hold what %s holds and the active site is not observed now", site)
	case !gtid.Lacks(a.Executed, held).IsEmpty():
		return fmt.Sprintf("%s holds %s that no other replica holds, nor the active site", site, gtid.Lacks(a.Executed, held))
	}
	return ""
}

// decideCancel judges <site>:cancel: only a reclone of that site that has
// not begun to replace its data (Requested, PreservingData) may stop; from
// Cloning on, stopping would leave the site's data half replaced.
func decideCancel(v RecloneVerdict, ask RecloneAsk) RecloneVerdict {
	site := v.Request.Site
	switch {
	case ask.Running != site:
		v.Reason, v.Message = v1alpha1.ReasonRecloneNotRunning, fmt.Sprintf("no reclone of %s runs", site)
	case ask.RunningPhase != v1alpha1.RecoveryRequested && ask.RunningPhase != v1alpha1.RecoveryPreservingData:
		v.Reason, v.Message = v1alpha1.ReasonConcurrentOperation,
			fmt.Sprintf("the reclone of %s is in %s: its data is being replaced; it can no longer be cancelled", site, ask.RunningPhase)
	}
	return v
}

// RecloneHolds reports whether site, whose latest reclone is r, is held by
// it (SiteRecovery.Holds): never a failover candidate, a donor, nor
// re-asserted. The active site and the target of a failover in flight
// (emergency, or planned: plannedTarget) are never held: holding the
// active site would fence the group's only writer on every pass, and
// holding a failover's target would stall the failover with the old
// primary fenced. How such a site came to be active (an edited or restored
// status) is for a person; the reclone itself stops (recloneHeld).
func RecloneHolds(in Input, plannedTarget, site string, r *v1alpha1.SiteRecovery) bool {
	switch {
	case !r.Holds(), site == in.ActiveSite, site == plannedTarget && in.PlannedInFlight:
		return false
	case in.InFlight != nil && in.InFlight.To == site:
		return false
	}
	return true
}
