package topology

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The ordered update (docs/upgrades.md): when the sites' Pod template
// changes, the sites are restarted one at a time, replicas first, each only
// once every other site is up and caught up, and the active site last,
// after a planned failover moved the primary role away from it (or, with
// primaryUpdateMethod restart, in place). PlanRollout says what the next
// step is; the group loop carries it out and persists nothing else, so an
// operator restarted in the middle resumes from the Deployments and status.

// RolloutSite is one site as the ordered update sees it.
type RolloutSite struct {
	// View is the site as this pass's Decide saw it (after Judge).
	View SiteView
	// Exists is false while the site has no Deployment yet.
	Exists bool
	// Stale is true when the site's Deployment is not what the spec renders now.
	Stale bool
	// Drifted is true when the Deployment's template hash says it is what
	// the spec renders but its spec is not (someone edited it): it is
	// rolled back as if it were stale.
	Drifted bool
	// KeepsPods is true when the site is Stale or Drifted and applying its
	// Deployment would leave its Pod template and replica count as they are
	// (only the strategy, revision history or the Deployment's own metadata
	// differ): the apply replaces no Pod, so it needs no turn in the order.
	KeepsPods bool
	// StrategyDrifted is true when the Deployment's strategy was set to
	// something other than Recreate: restoring it touches no Pod of a
	// rolled-out Deployment.
	StrategyDrifted bool
	// StatusLags is true while the Deployment controller has not yet seen
	// the Deployment's latest generation: PodReady says nothing yet.
	StatusLags bool
	// PodDrifted is true when the Deployment is rolled out and current but
	// an image of its Pod was changed on the Pod itself: setting it back
	// restarts that container, so it takes its turn in the order.
	PodDrifted bool
	// SidecarHash is the SHA-256 of the binary the site's sidecar runs, as
	// its last report said; "" when unknown.
	SidecarHash string
	// UpgradeBusy is true while an in-place upgrade of the site's sidecar
	// is in flight, or shortly after one ended (its new process reports
	// its hash at its next tick).
	UpgradeBusy bool
	// PodReady is true when the site's Deployment is rolled out: its one Pod
	// runs the Deployment's current template and is available.
	PodReady bool
	// SidecarAskedAt is when the site's sidecar last asked this operator
	// for the view, as the gate in front of making a site writable reads
	// it (MayMakeWritable): zero when it has not since this operator
	// started, or when the ask may have come from another Pod's sidecar (a
	// Pod of the site went away and its kubelet is not yet known to have
	// stopped it).
	SidecarAskedAt time.Time
}

// RolloutInput is everything PlanRollout looks at.
type RolloutInput struct {
	// Namespace and Group name the group in the command WaitingForUser shows.
	Namespace, Group string
	// ActiveSite is status.activeSite.
	ActiveSite string
	// Sites are in spec order.
	Sites []RolloutSite
	// Decision is this pass's decision kind: the update moves only while
	// the group is Healthy or Degraded.
	Decision Kind
	// EmergencyInFlight is true while status.failover is set.
	EmergencyInFlight bool
	// Recloning names the site whose reclone runs, "": none. The update
	// takes no step while it runs (rolloutBusy). The primary's
	// switchover waits for it (a planned failover is refused meanwhile).
	Recloning string
	// AuthorityMoved is true when the active site changed during this
	// pass: the snapshot describes the group before the change.
	AuthorityMoved bool
	// PlannedRequested is true while a planned failover is asked for (the
	// annotation) or in flight, whoever asked.
	PlannedRequested bool
	// Phase is status.phase as the pass read it.
	Phase v1alpha1.GroupPhase
	// Method and Strategy are spec.updates; empty means the defaults.
	Method   v1alpha1.PrimaryUpdateMethod
	Strategy v1alpha1.PrimaryUpdateStrategy
	// SidecarHash is the SHA-256 of the sidecar binary the operator ships;
	// "" when unknown (no site is then stale by its binary).
	SidecarHash string
	// InPlace is spec.updates.inPlaceSidecarUpdates.
	InPlace bool
	// MaxLag is the lag at or below which a replica counts as caught up.
	MaxLag time.Duration
	// PeerCheckInterval is the group's: a replica is back only when its
	// sidecar asked within two of them (SidecarAsking); zero skips that rule.
	PeerCheckInterval time.Duration
	// CooldownEnds is when a new failover is allowed (lastFailover plus
	// spec.failoverCooldown); zero when there was none.
	CooldownEnds time.Time
	// Switchover counts the switchovers this update started that failed
	// in a row (NoteSwitchoverFailure of status.updateSwitchover and the
	// last planned failover), for the back-off (rollout_backoff.go).
	Switchover SwitchoverFailures
	// ProgressAt is status.updateProgressTime: when the update began or
	// last took a step; zero when unknown. ProgressDeadline is
	// RolloutDeadline's answer for the group.
	ProgressAt       time.Time
	ProgressDeadline time.Duration
	// Now is the time of the pass.
	Now time.Time
}

// RolloutAction is what the loop does for the update in this pass.
type RolloutAction string

// The actions.
const (
	// RolloutIdle: nothing is stale (or only skipped sites are).
	RolloutIdle RolloutAction = "Idle"
	// RolloutWait: something must happen first; Message says what.
	RolloutWait RolloutAction = "Wait"
	// RolloutUpdate: apply Site's Deployment (restarts its Pod).
	RolloutUpdate RolloutAction = "Update"
	// RolloutSwitchover: start a planned failover from the active site to Target.
	RolloutSwitchover RolloutAction = "Switchover"
	// RolloutUpgradeInPlace: stream the shipped sidecar binary to Site's
	// sidecar, which swaps it in and re-executes itself; mysqld keeps running.
	RolloutUpgradeInPlace RolloutAction = "UpgradeInPlace"
	// RolloutWaitForUser: supervised, every other site is updated; a person
	// moves the primary role.
	RolloutWaitForUser RolloutAction = "WaitForUser"
)

// RolloutStep is PlanRollout's answer.
type RolloutStep struct {
	Action RolloutAction
	// Site is the site to update (RolloutUpdate) or the stale active site
	// (RolloutSwitchover, RolloutWaitForUser).
	Site string
	// Target is the switchover's target (RolloutSwitchover), or the site the
	// message suggests to a person (RolloutWaitForUser; may be empty).
	Target string
	// Phase is what status.phase says after this pass.
	Phase v1alpha1.GroupPhase
	// Message is status.message.
	Message string
	// Skipped lists the stale sites that are not updated: fenced by an
	// administrator or diverged.
	Skipped []string
	// BinaryStale lists the sites whose sidecar reports another executable
	// hash than the binary the operator ships and that the update does not
	// upgrade in place (inPlaceSidecarUpdates off, or the site skipped);
	// BinaryMessage says so and names the ways out, for the group's
	// SidecarBinaryStale condition and Event. Empty when there are none.
	BinaryStale   []string
	BinaryMessage string
	// PodRepair is true for RolloutUpdate when only the site's Pod drifted:
	// its images are set back to its Deployment's (RepairSitePod) instead
	// of applying the Deployment, which is current.
	PodRepair bool
	// PodDrifted lists the sites whose Pod (not Deployment) was edited, for
	// the message.
	PodDrifted []string
	// Drifted lists the sites the update rolls back because their
	// Deployment was edited (not the skipped ones), for the SiteDrifted Event.
	Drifted []string
	// Repairs are the sites whose Deployment is set back to the rendering
	// in this pass without replacing a Pod (repairInPlace), whatever the
	// ordered update does.
	Repairs []RolloutRepair
	// ProgressAt is what status.updateProgressTime becomes: zero while no
	// update is in progress (rollout_progress.go).
	ProgressAt time.Time
	// Stalled is true when the update waited longer than its progress
	// deadline; StalledMessage says what for, for the UpdateStalled
	// condition and Event.
	Stalled        bool
	StalledMessage string
	// StalledReason is the UpdateStalled condition's reason while Stalled:
	// the progress deadline, or the switchover's retries exhausted.
	StalledReason string
	// Switchover is what status.updateSwitchover becomes.
	Switchover SwitchoverFailures
}

// RolloutRepair is a repair of a site's Deployment that replaces no Pod.
type RolloutRepair struct {
	Site string
	// Strategy: only set the strategy back to Recreate (the next pass
	// judges the rest); otherwise apply the rendering.
	Strategy bool
}

// repairWhen says when a Deployment is repaired without a turn in the order.
type repairWhen int

const (
	repairNo    repairWhen = iota // not in place: the order's, if stale
	repairNow                     // in this pass
	repairLater                   // not yet known: neither repaired nor stale in this pass
)

// repairInPlace says how the site's Deployment is set back without a turn
// in the ordered update: a strategy someone changed (or a pause), on a
// rolled-out Deployment (every Pod runs the current template, so the
// strategy moves none), is set back first and alone; a stale or drifted
// Deployment whose apply keeps its Pod template and replica count is
// applied. While the Deployment controller has not seen a changed strategy
// yet, whether its Pods are rolled out is not known: the pass waits
// (repairLater) rather than count the primary stale and switch it over.
// Fenced and diverged sites too: neither repair replaces a Pod.
func repairInPlace(s RolloutSite) (RolloutRepair, repairWhen) {
	switch {
	case !s.Exists:
		return RolloutRepair{}, repairNo
	case s.StrategyDrifted && s.PodReady:
		return RolloutRepair{Site: s.View.Name, Strategy: true}, repairNow
	case s.StrategyDrifted && s.StatusLags:
		return RolloutRepair{}, repairLater
	case s.StrategyDrifted:
		return RolloutRepair{}, repairNo
	case (s.Stale || s.Drifted) && s.KeepsPods:
		return RolloutRepair{Site: s.View.Name}, repairNow
	}
	return RolloutRepair{}, repairNo
}

// PlanRollout is the next step of the ordered update. Its rules, in order:
//   - nothing stale among the sites it may update: Idle, unless the update
//     was in progress and an updated site is not back yet (Wait);
//   - an emergency failover, a planned failover (asked or running), or a
//     group that is neither Healthy nor Degraded: Wait, in the phase the
//     update had (none before it began, WaitingForUser while the person's
//     switchover runs);
//   - a stale replica is updated only when every other site it may update
//     is up, Ready and caught up (a stale replica that is already down is
//     taken first: updating it takes nothing else down);
//   - the active site comes last: supervised, WaitForUser; method restart,
//     Update it in place; method switchover, a planned failover to the
//     freshest caught-up, updated primary-candidate replica, once the
//     cooldown is over and the back-off after failed switchovers too
//     (rollout_backoff.go); after MaxSwitchoverFailures in a row,
//     WaitForUser, stalled.
//
// A site whose sidecar reports another executable hash than the binary
// the operator ships is stale by its binary. With InPlace, such a site
// whose Deployment is current has its sidecar upgraded in place
// (RolloutUpgradeInPlace), before any Deployment is applied, one site at a
// time, replicas first, each only once every site is back and no upgrade
// is busy: mysqld is not restarted, so the active site needs no switchover.
// Without InPlace a restart would bring back the same image, so such a
// site is not restarted for it: it is named in the message and in
// BinaryStale (the SidecarBinaryStale condition), and the update does not
// enter Updating for it, so it holds no planned failover back. A site
// stale by its Deployment is restarted by the steps above, which may
// bring the new binary itself.
//
// Sites fenced by an administrator or diverged are never updated, never
// waited for, and named in the message.
//
// A Drifted site (its Deployment edited by hand) is stale: the update
// rolls it back in the same order, and names it in Drifted and the message.
//
// An update that has taken no step for longer than ProgressDeadline is
// Stalled (rollout_progress.go): it stays Updating, says so in the
// message, and no longer holds planned failovers back.
func PlanRollout(in RolloutInput) RolloutStep {
	var stale, skipped, binary, notInPlace, drifted []string
	var todo []RolloutSite
	var repairs []RolloutRepair
	var podOnly []string
	in.Sites = slices.Clone(in.Sites)
	for i, s := range in.Sites {
		if s.Drifted && !rolloutSkips(in, s) {
			drifted = append(drifted, s.View.Name)
		}
		switch r, when := repairInPlace(s); when {
		case repairNow:
			// Not stale for the order: nothing of the site goes down.
			repairs = append(repairs, r)
			s.Stale, s.Drifted = false, false
		case repairLater:
			s.Stale, s.Drifted = false, false
		}
		if s.PodDrifted && !s.Stale && !s.Drifted {
			podOnly = append(podOnly, s.View.Name)
		}
		s.Stale = s.Stale || s.Drifted || s.PodDrifted // a hand edit is rolled back like any change
		in.Sites[i] = s
		bin := binaryStale(in, s)
		if bin && (!in.InPlace || rolloutSkips(in, s)) {
			notInPlace = append(notInPlace, s.View.Name)
		}
		switch {
		case rolloutSkips(in, s):
			if s.Stale || (bin && in.InPlace) {
				skipped = append(skipped, s.View.Name)
			}
		default:
			todo = append(todo, s)
			switch {
			case s.Stale || (bin && in.InPlace):
				stale = append(stale, s.View.Name)
			case bin:
				binary = append(binary, s.View.Name)
			}
		}
	}
	step := planRollout(in, todo, stale)
	rolloutProgress(in, &step)
	step.Switchover = switchoverAfter(in, step)
	step.Skipped, step.Drifted, step.Repairs = skipped, drifted, repairs
	step.PodRepair = step.Action == RolloutUpdate && slices.Contains(podOnly, step.Site)
	for _, name := range podOnly {
		if !slices.Contains(skipped, name) {
			step.PodDrifted = append(step.PodDrifted, name)
		}
	}
	if len(drifted) > 0 && step.Action != RolloutIdle {
		step.Message += fmt.Sprintf("; changed outside the operator, rolled back in order: %s", strings.Join(drifted, ", "))
	}
	if len(step.PodDrifted) > 0 && step.Action != RolloutIdle {
		step.Message += fmt.Sprintf("; Pod images changed on the Pod, set back in order: %s", strings.Join(step.PodDrifted, ", "))
	}
	step.BinaryStale, step.BinaryMessage = notInPlace, binaryMessage(in, notInPlace)
	if len(binary) > 0 {
		msg := fmt.Sprintf("sidecar binary differs from the operator's: %s (set spec.updates.inPlaceSidecarUpdates, "+
			"or change the sidecar image)", strings.Join(binary, ", "))
		if step.Message != "" {
			msg = step.Message + "; " + msg
		}
		step.Message = msg
	}
	switch {
	case len(skipped) == 0:
	case step.Action == RolloutIdle:
		step.Message = fmt.Sprintf("not updated (fenced or diverged): %s", strings.Join(skipped, ", "))
	default:
		step.Message += fmt.Sprintf("; not updated (fenced or diverged): %s", strings.Join(skipped, ", "))
	}
	return step
}

func planRollout(in RolloutInput, todo []RolloutSite, stale []string) RolloutStep {
	inProgress := in.Phase == v1alpha1.GroupPhaseUpdating || in.Phase == v1alpha1.GroupPhaseWaitingForUser
	if len(stale) == 0 {
		if down := notBack(in, todo, ""); inProgress && down != "" {
			return waitStep(fmt.Sprintf("waiting for %s (0 of %d left)", down, len(todo)))
		}
		return RolloutStep{Action: RolloutIdle}
	}
	left := fmt.Sprintf("(%d of %d left)", len(stale), len(todo))
	if why := rolloutBusy(in); why != "" {
		// The phase stays what it was: an update that has not begun does
		// not begin, and WaitingForUser stays while the person's planned
		// failover runs (Updating would make it refuse that request).
		step := waitStep(fmt.Sprintf("waiting: %s %s", why, left))
		step.Phase = in.Phase
		return step
	}
	if step, ok := planInPlace(in, todo, left); ok {
		return step
	}
	if r, ok := nextReplica(in, todo); ok {
		if down := notBack(in, todo, r.View.Name); down != "" {
			return waitStep(fmt.Sprintf("updating: waiting for %s before %s %s", down, r.View.Name, left))
		}
		return RolloutStep{Action: RolloutUpdate, Site: r.View.Name, Phase: v1alpha1.GroupPhaseUpdating,
			Message: fmt.Sprintf("updating %s %s", r.View.Name, left)}
	}
	return planPrimary(in, todo, left)
}

// planPrimary is the step when the active site is the only stale site left.
func planPrimary(in RolloutInput, todo []RolloutSite, left string) RolloutStep {
	active := in.ActiveSite
	if down := notBack(in, todo, active); down != "" {
		return waitStep(fmt.Sprintf("updating: waiting for %s before the primary %s %s", down, active, left))
	}
	target := switchoverTarget(in, todo)
	if in.Strategy == v1alpha1.UpdateSupervised {
		return RolloutStep{Action: RolloutWaitForUser, Site: active, Target: target,
			Phase: v1alpha1.GroupPhaseWaitingForUser, Message: waitForUserMessage(in, target)}
	}
	if in.Method == v1alpha1.UpdateRestart {
		return RolloutStep{Action: RolloutUpdate, Site: active, Phase: v1alpha1.GroupPhaseUpdating,
			Message: fmt.Sprintf("restarting the primary %s in place %s", active, left)}
	}
	switch {
	case target == "":
		return waitStep(fmt.Sprintf("updating: no updated, caught-up primary-candidate replica to switch the primary %s over to %s",
			active, left))
	case !in.CooldownEnds.IsZero() && in.Now.Before(in.CooldownEnds):
		return waitStep(fmt.Sprintf("updating: switching the primary %s over to %s after the failover cooldown ends at %s %s",
			active, target, in.CooldownEnds.UTC().Format(time.RFC3339), left))
	}
	if step, ok := switchoverBackoff(in, target, left); ok {
		return step
	}
	return RolloutStep{Action: RolloutSwitchover, Site: active, Target: target, Phase: v1alpha1.GroupPhaseUpdating,
		Message: fmt.Sprintf("switching the primary %s over to %s before updating it %s", active, target, left)}
}

func waitStep(msg string) RolloutStep {
	return RolloutStep{Action: RolloutWait, Phase: v1alpha1.GroupPhaseUpdating, Message: msg}
}

func waitForUserMessage(in RolloutInput, target string) string {
	site := "<site>"
	if target != "" {
		site = target
	}
	return fmt.Sprintf("every site but the primary %s is updated; to go on, switch it over: "+
		"kubectl annotate mfg %s -n %s %s=%s --overwrite", in.ActiveSite, in.Group, in.Namespace,
		v1alpha1.PlannedFailoverAnnotation, site)
}

// rolloutBusy says why no site may be touched now, or "".
func rolloutBusy(in RolloutInput) string {
	switch {
	case in.EmergencyInFlight:
		return "an emergency failover is in flight"
	case in.PlannedRequested:
		return "a planned failover is in flight"
	case in.AuthorityMoved:
		return "the active site changed in this pass"
	case in.Recloning != "":
		// Its site is down or being saved, and a restart (or an in-place
		// upgrade) of any other site could be the clone's donor's, or
		// leave two sites down at once.
		return fmt.Sprintf("the reclone of %s runs; no site is restarted until it ends", in.Recloning)
	case in.Decision != KindHealthy && in.Decision != KindDegraded:
		return fmt.Sprintf("the group is %s", in.Decision)
	case in.ActiveSite == "":
		return "no active site"
	}
	return ""
}

// binaryMessage says that sites' sidecars run another binary than the
// operator ships, why the update leaves them, and the ways out; "" for none.
func binaryMessage(in RolloutInput, sites []string) string {
	if len(sites) == 0 {
		return ""
	}
	who := "sidecar of " + sites[0] + " runs"
	if len(sites) > 1 {
		who = "sidecars of " + strings.Join(sites, ", ") + " run"
	}
	if in.InPlace {
		return fmt.Sprintf("the %s another binary than the operator ships; a fenced or diverged site is not "+
			"upgraded in place until it is neither", who)
	}
	return fmt.Sprintf("the %s another binary than the operator ships; restarting the Pod would bring back the same "+
		"image, so the ordered update leaves it: set spec.updates.inPlaceSidecarUpdates: true to upgrade it in "+
		"place without restarting mysqld, or set spec.sidecar.image to the sidecar image of the operator's release "+
		"(an ordered update then restarts the sites one at a time)", who)
}

// rolloutSkips: the update leaves the site as it is: fenced by an
// administrator (a reclone from Cloning on marks it so), diverged, or
// under a reclone that has not begun to replace its data yet (its data is
// being saved; the reclone does not hold it, so it is not marked fenced).
func rolloutSkips(in RolloutInput, s RolloutSite) bool {
	return s.View.AdminFenced || s.View.Diverged || (in.Recloning != "" && s.View.Name == in.Recloning)
}

// binaryStale: the site's sidecar runs another binary than the operator ships.
func binaryStale(in RolloutInput, s RolloutSite) bool {
	return in.SidecarHash != "" && s.SidecarHash != "" && s.SidecarHash != in.SidecarHash
}

// planInPlace is the in-place upgrade's step, false when no site's sidecar
// is to be upgraded in place: one whose Deployment is current and whose
// binary is stale. Replicas go first; an upgrade in flight, or a site not
// back, makes the update wait.
func planInPlace(in RolloutInput, todo []RolloutSite, left string) (RolloutStep, bool) {
	if !in.InPlace {
		return RolloutStep{}, false
	}
	var next *RolloutSite
	for i, s := range todo {
		if s.UpgradeBusy {
			return waitStep(fmt.Sprintf("upgrading the sidecar of %s in place %s", s.View.Name, left)), true
		}
		if s.Stale || !binaryStale(in, s) {
			continue
		}
		if next == nil || (next.View.Name == in.ActiveSite && s.View.Name != in.ActiveSite) {
			next = &todo[i]
		}
	}
	if next == nil {
		return RolloutStep{}, false
	}
	if down := notBack(in, todo, ""); down != "" {
		return waitStep(fmt.Sprintf("updating: waiting for %s before upgrading the sidecar of %s in place %s",
			down, next.View.Name, left)), true
	}
	return RolloutStep{Action: RolloutUpgradeInPlace, Site: next.View.Name, Phase: v1alpha1.GroupPhaseUpdating,
		Message: fmt.Sprintf("upgrading the sidecar of %s in place %s", next.View.Name, left)}, true
}

// nextReplica is the stale site to update next, other than the active
// site: one that is already down first, then spec order.
func nextReplica(in RolloutInput, todo []RolloutSite) (RolloutSite, bool) {
	var first *RolloutSite
	for i, s := range todo {
		if !s.Stale || s.View.Name == in.ActiveSite {
			continue
		}
		if !siteUp(in, s) {
			return s, true
		}
		if first == nil {
			first = &todo[i]
		}
	}
	if first == nil {
		return RolloutSite{}, false
	}
	return *first, true
}

// notBack says what the first site other than except that is not back
// waits for ("pdx to be Ready and caught up"), or "" when every such site
// is back.
func notBack(in RolloutInput, todo []RolloutSite, except string) string {
	for _, s := range todo {
		if s.View.Name != except && !siteBack(in, s) {
			if siteUp(in, s) {
				return s.View.Name + "'s sidecar to ask the operator for the view"
			}
			return s.View.Name + " to be Ready and caught up"
		}
	}
	return ""
}

// siteBack: the site is up (siteUp) and, unless it is the active site,
// could be made writable: its sidecar asked this operator within two
// peerCheckIntervals (SidecarAsking), as the gate in front of a promotion
// demands. A replica whose Pod was just replaced is not back until then:
// its old Pod's sidecar is not yet proven stopped, so a switchover to it
// would be held back after the old primary's fence (a write outage), and
// an emergency could not promote it either.
func siteBack(in RolloutInput, s RolloutSite) bool {
	if !siteUp(in, s) {
		return false
	}
	if s.View.Name == in.ActiveSite {
		return true
	}
	ok, _ := SidecarAsking(ActCheck{Site: s.View.Name, SidecarAskedAt: s.SidecarAskedAt,
		PeerCheckInterval: in.PeerCheckInterval, Now: in.Now})
	return ok
}

// siteUp: the site's Pod is rolled out and Ready, and the site answers
// this pass as what it should be: the active site writable, any other a
// read-only replica that replicates without error within MaxLag.
func siteUp(in RolloutInput, s RolloutSite) bool {
	v := s.View
	if !s.Exists || !s.PodReady || v.Stale {
		return false
	}
	if v.Name == in.ActiveSite {
		return v.State == v1alpha1.StateWritable
	}
	return v.State == v1alpha1.StateReadOnly && caughtUp(v.Replication, in.MaxLag)
}

func caughtUp(r Replication, maxLag time.Duration) bool {
	return r.Running && r.Error == "" && (maxLag <= 0 || r.Lag <= maxLag)
}

// switchoverTarget is the freshest updated primary-candidate replica that
// is back: the least lag, then spec order. "" when there is none.
func switchoverTarget(in RolloutInput, todo []RolloutSite) string {
	best, bestLag := "", time.Duration(0)
	for _, s := range todo {
		v := s.View
		if v.Name == in.ActiveSite || s.Stale || v.MaybeWritable || !siteBack(in, s) ||
			(v.Role != "" && v.Role != v1alpha1.RolePrimaryCandidate) {
			continue
		}
		if best == "" || v.Replication.Lag < bestLag {
			best, bestLag = v.Name, v.Replication.Lag
		}
	}
	return best
}
