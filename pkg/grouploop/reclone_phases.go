package grouploop

import (
	"context"
	"errors"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// advanceReclone runs the persisted phase's work, and when it is done
// persists the next phase (whose work runs from the next pass on).
func (l *Loop) advanceReclone(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) {
	r := site.Recovery
	fail, wait := recloneHeld(p, site.Name)
	switch {
	case fail != "":
		l.releaseReclone(ctx, p.Group, site.Name, fail)
		return
	case wait != "":
		l.log.V(1).Info("reclone waits", "site", site.Name, "phase", r.Phase, "why", wait)
		return
	}
	switch r.Phase {
	case v1alpha1.RecoveryRequested:
		if l.env.Recloner == nil {
			l.failReclone(ctx, p.Group, site.Name, v1alpha1.ReasonRecloneUnavailable,
				"this operator has no reclone executor (the sidecars' reclone endpoint is not built); nothing was touched")
			return
		}
		// The site's sidecar is asked first: one that cannot reclone fails
		// the reclone here, before anything is touched.
		if _, done := l.runPhase(ctx, p.Group, site, v1alpha1.ReasonRecloneUnavailable); !done {
			return
		}
		l.nextPhase(ctx, p.Group, site.Name, v1alpha1.RecoveryPreservingData, "saving the errant transactions")
	case v1alpha1.RecoveryPreservingData:
		l.preserve(ctx, p, site)
	case v1alpha1.RecoveryCloning:
		l.cloneSite(ctx, p, site)
	case v1alpha1.RecoveryCatchingUp:
		l.catchUp(ctx, p, site)
	}
}

// recloneHeld says why a running reclone must stop (fail: the site is, or
// is becoming, the active site; none of its work may run on it again) or
// wait (wait: a failover holds the topology, before or after this pass's
// act). Both are "" when its phase may run.
func recloneHeld(p failover.Pass, site string) (fail, wait string) {
	st, in := &p.Group.Status, p.Input
	for _, active := range []string{in.ActiveSite, st.ActiveSite} {
		if active == site {
			return site + " is the active site: its data is never cloned over; the reclone stops here", ""
		}
	}
	for _, it := range []*topology.Intent{in.InFlight, failover.InFlight(st)} {
		if it != nil && it.To == site {
			return fmt.Sprintf("an emergency failover targets %s: the reclone stops here", site), ""
		}
	}
	if b := st.PlannedFailover; b != nil && b.Target == site && failover.PlannedInFlight(st) {
		return fmt.Sprintf("a planned failover targets %s: the reclone stops here", site), ""
	}
	if in.InFlight != nil || in.PlannedInFlight || failover.InFlight(st) != nil || failover.PlannedInFlight(st) {
		return "", "a failover holds the topology"
	}
	if !topology.RecloneSettled(p.Decision.Kind) {
		return "", fmt.Sprintf("the group does not serve normally (%s)", p.Decision.Kind)
	}
	return "", ""
}

// runPhase asks the site's sidecar for the phase's work; ok is false while
// it runs or could not be asked (asked again next pass), or when it failed
// (then the reclone is Failed with reason).
func (l *Loop) runPhase(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site *v1alpha1.SiteStatus,
	reason string) (RecloneProgress, bool) {
	if l.env.Recloner == nil {
		l.failReclone(ctx, g, site.Name, v1alpha1.ReasonRecloneUnavailable, "this operator has no reclone executor")
		return RecloneProgress{}, false
	}
	r := site.Recovery
	step := RecloneStep{Phase: r.Phase, Request: recloneID(r), Donor: r.Donor, DivergentGtid: r.DivergentGtid,
		Generation: g.Status.TopologyGeneration}
	if r.StartTime != nil {
		step.Accepted = r.StartTime.Time
	}
	for _, d := range g.Status.Sites {
		if r.Phase == v1alpha1.RecoveryCloning && d.Name == r.Donor {
			step.DonorGtid = d.GtidExecuted
		}
	}
	prog, err := l.env.Recloner.Run(ctx, l.key, site.Name, step)
	switch {
	case errors.Is(err, ErrRecloneUnsupported):
		l.failReclone(ctx, g, site.Name, v1alpha1.ReasonRecloneUnavailable,
			fmt.Sprintf("%s: %s's sidecar has no reclone endpoint (an older version?): %v", r.Phase, site.Name, err))
		return prog, false
	case err != nil:
		l.log.Error(err, "reclone phase", "site", site.Name, "phase", r.Phase)
		return prog, false
	case prog.Failed != "":
		l.failReclone(ctx, g, site.Name, reason, fmt.Sprintf("%s: %s", r.Phase, prog.Failed))
		return prog, false
	}
	return prog, prog.Done
}

// preserve has the site's sidecar fence it and prepare the folder its
// data is moved to (with a diverged site's errant set), then waits until the site's data may be replaced
// (mayWipe) before Cloning is persisted.
func (l *Loop) preserve(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) {
	r := site.Recovery
	// Also a site that is not diverged: its sidecar records the reclone's
	// PreservingData before it accepts Cloning, and names the folder its
	// whole datadir will be moved to.
	prog, done := l.runPhase(ctx, p.Group, site, v1alpha1.ReasonPreserveFailed)
	if !done {
		return
	}
	r.PreservedAt = prog.PreservedAt
	why := l.mayWipe(ctx, p, site)
	if why == "" {
		why = l.recheckDonor(p, site)
	}
	if why != "" {
		if r.Message != "waiting to clone: "+why {
			r.Message = "waiting to clone: " + why
			l.log.Info("reclone waits before cloning", "site", site.Name, "why", why)
			if err := l.patcher.PersistStatus(ctx, p.Group); err != nil {
				l.log.Error(err, "persist the reclone's wait", "site", site.Name)
			}
		}
		return
	}
	msg := "nothing diverged to save; cloning from " + r.Donor
	if r.DivergentGtid != "" {
		msg = fmt.Sprintf("errant transactions saved at %s; cloning from %s", r.PreservedAt, r.Donor)
	}
	l.nextPhase(ctx, p.Group, site.Name, v1alpha1.RecoveryCloning, msg)
}

// recheckDonor makes sure the reclone's donor may still donate before
// Cloning is persisted (the site's data is replaced from it): a donor that
// went away or fell behind since the acceptance is replaced by the one
// topology.CloneDonor picks now. It says why Cloning must wait, "" when it
// need not.
func (l *Loop) recheckDonor(p failover.Pass, site *v1alpha1.SiteStatus) string {
	r := site.Recovery
	unfit := topology.DonorUnfit(p.Input, site.Name, r.Donor)
	if unfit == "" {
		return ""
	}
	d, err := topology.CloneDonor(p.Input, site.Name)
	if err != nil {
		return fmt.Sprintf("the donor %s may not donate (%s) and no other may: %v", r.Donor, unfit, err)
	}
	l.log.Info("reclone donor replaced before cloning", "site", site.Name, "was", r.Donor, "why", unfit, "donor", d.Site)
	r.Donor = d.Site // persisted with Cloning
	return ""
}

// cloneSite replaces the site's data; once done, CatchingUp records the
// active site's set the site must reach.
func (l *Loop) cloneSite(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) {
	active, _ := p.Input.Site(p.Input.ActiveSite)
	if active.State != v1alpha1.StateWritable || active.Stale {
		// CatchingUp needs the set the active site holds now.
		l.log.V(1).Info("reclone waits for the active site to be observed writable", "site", site.Name)
		return
	}
	if !l.mayStartClone(ctx, p, site) {
		return
	}
	if _, done := l.runPhase(ctx, p.Group, site, v1alpha1.ReasonCloneFailed); !done {
		return
	}
	failover.SiteRecord(&p.Group.Status, site.Name).Recovery.CatchUpGtid = active.Executed.String()
	l.nextPhase(ctx, p.Group, site.Name, v1alpha1.RecoveryCatchingUp,
		fmt.Sprintf("cloned; waiting to replicate up to %s", active.Executed))
}

// catchUp ends the reclone once the site replicates at the recorded set:
// its divergence mark goes, and it rejoins like any replica.
func (l *Loop) catchUp(ctx context.Context, p failover.Pass, site *v1alpha1.SiteStatus) {
	// The sidecar seeds the clone's position (again, after a restart that
	// came between); the operator's maintain then points its replication
	// at the active site.
	if _, done := l.runPhase(ctx, p.Group, site, v1alpha1.ReasonCloneFailed); !done {
		return
	}
	target, err := gtid.ParseSet(site.Recovery.CatchUpGtid)
	if err != nil {
		l.failReclone(ctx, p.Group, site.Name, v1alpha1.ReasonInvalidRequest, "catchUpGtid unreadable: "+err.Error())
		return
	}
	ok, why := topology.RecloneCaughtUp(p.Input, site.Name, target)
	if !ok {
		l.log.V(1).Info("reclone catching up", "site", site.Name, "waiting", why)
		return
	}
	g := p.Group
	rec := failover.SiteRecord(&g.Status, site.Name)
	rec.DivergentGtid = ""
	l.endReclone(g, rec, v1alpha1.RecoveryRejoined, "", "replicating at the primary's position")
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "persist the rejoined reclone", "site", site.Name)
		return
	}
	l.env.Metrics.Reclones.WithLabelValues(g.Namespace, g.Name, recloneRejoined).Inc()
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventRecloneRejoined,
		fmt.Sprintf("%s was recloned from %s and rejoined", site.Name, rec.Recovery.Donor))
}

// nextPhase persists the reclone's next phase before its work may run.
func (l *Loop) nextPhase(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string, phase v1alpha1.RecoveryPhase, msg string) {
	r := failover.SiteRecord(&g.Status, site).Recovery
	now := stamp(l.env.Clock.Now())
	r.Phase, r.PhaseStartTime, r.Message = phase, &now, msg
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "persist the reclone phase", "site", site, "phase", phase)
		return
	}
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventReclonePhase, fmt.Sprintf("%s: %s: %s", site, phase, msg))
}

// failReclone ends the reclone with a reason; the site is kept as it is.
// It reports whether the failure was persisted.
func (l *Loop) failReclone(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, reason, msg string) bool {
	return l.endFailed(ctx, g, site, reason, msg, failover.SiteRecord(&g.Status, site).Recovery.Phase)
}

// endFailed persists the reclone Failed with failedPhase, reports and
// counts it; false when it could not be persisted.
func (l *Loop) endFailed(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, reason, msg string,
	failedPhase v1alpha1.RecoveryPhase) bool {
	rec := failover.SiteRecord(&g.Status, site)
	rec.Recovery.FailedPhase = failedPhase
	l.endReclone(g, rec, v1alpha1.RecoveryFailed, reason, msg)
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "persist the failed reclone", "site", site)
		return false
	}
	l.env.Metrics.Reclones.WithLabelValues(g.Namespace, g.Name, recloneFailed).Inc()
	l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventRecloneFailed, fmt.Sprintf("reclone of %s failed: %s: %s", site, reason, msg))
	return true
}

// releaseReclone ends the reclone of a site that is, or is becoming, the
// active site: it fails with ActiveSite and records no FailedPhase, so the
// site is not held (holding the active site would fence the writer on
// every pass). What phase it was in is kept in the message. An earlier
// reclone's DataIncomplete goes too: the site serves as the group's
// history now, whatever it holds.
func (l *Loop) releaseReclone(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, why string) {
	r := failover.SiteRecord(&g.Status, site).Recovery
	r.DataIncomplete = false
	l.endFailed(ctx, g, site, v1alpha1.ReasonRecloneActiveSite, fmt.Sprintf("%s (it was in %s)", why, r.Phase), "")
}

func (l *Loop) endReclone(_ *v1alpha1.MysqlFailoverGroup, rec *v1alpha1.SiteStatus, phase v1alpha1.RecoveryPhase, reason, msg string) {
	now := stamp(l.env.Clock.Now())
	r := rec.Recovery
	r.Phase, r.Reason, r.Message, r.PhaseStartTime, r.CompletionTime = phase, reason, msg, &now, &now
}
