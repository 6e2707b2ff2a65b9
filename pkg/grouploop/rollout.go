package grouploop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// siteWorkloads is what the ordered update and the untaint need of the
// router beyond failover.Router (routing.Router has them; a loop without
// them, as in the simulation, rolls nothing out).
type siteWorkloads interface {
	SiteWorkloads(ctx context.Context, rd client.Reader, g *v1alpha1.MysqlFailoverGroup) (map[string]routing.Workload, error)
	ApplySiteWorkload(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, resourceVersion string) error
	RestoreSiteStrategy(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, resourceVersion string) error
	RepairSitePod(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, pod string, uid types.UID, resourceVersion string) error
	UntaintSite(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (int, error)
}

// rollout runs the ordered update's step for this pass (docs/upgrades.md):
// topology.PlanRollout decides from the Deployments (read from the API
// server) and the pass's snapshot; rollout applies one site's Deployment or
// starts the update's switchover, and sets status.phase and message, which
// record persists. Nothing else is remembered: a restarted operator reads
// the same Deployments and status and takes the same step. Only when
// mayAct (the pass's act maintained a healthy or degraded group and did
// nothing else) is a step carried out; otherwise the phase only reports.
func (l *Loop) rollout(ctx context.Context, p failover.Pass, mayAct bool) {
	w, ok := l.env.Router.(siteWorkloads)
	if !ok {
		return
	}
	g := p.Group
	st := &g.Status
	loads, err := w.SiteWorkloads(ctx, l.env.Reader, g)
	if err != nil {
		l.log.Error(err, "ordered update: read Deployments")
		return
	}
	step := topology.PlanRollout(l.rolloutInput(p, loads))
	l.recordBinaryStale(g, step)
	l.recordStalled(g, step)
	l.recordDrift(g, step)
	acts := step.Action == topology.RolloutUpdate || step.Action == topology.RolloutSwitchover ||
		step.Action == topology.RolloutUpgradeInPlace
	if !mayAct {
		if acts {
			return // the pass did something else: the next pass plans again
		}
	} else if len(step.Repairs) > 0 {
		l.repairInPlace(ctx, p, w, step.Repairs, loads)
	}
	if acts {
		if err := l.mayRestart(ctx); err != nil {
			l.log.Info("ordered update held back", "step", step.Action, "site", step.Site, "reason", err.Error())
			return
		}
	}
	was := l.patcher.read.Phase
	switch step.Action {
	case topology.RolloutUpdate:
		err = l.updateSite(ctx, p, w, step, loads[step.Site])
	case topology.RolloutSwitchover:
		err = l.updateSwitchover(ctx, p, step)
	case topology.RolloutUpgradeInPlace:
		l.upgradeInPlace(g, step)
	case topology.RolloutWaitForUser:
		l.env.Notifier.EventOnChange(g, failover.EventNormal, v1alpha1.EventUpdateWaitingForUser, step.Message)
	case topology.RolloutIdle:
		if was != v1alpha1.GroupPhaseNone {
			l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventUpdateCompleted,
				"every site runs the current Pod template")
		}
	}
	if err != nil {
		l.log.Error(err, "ordered update", "step", step.Action, "site", step.Site)
		return
	}
	if step.Phase != v1alpha1.GroupPhaseWaitingForUser {
		l.env.Notifier.clearOnChange(g, v1alpha1.EventUpdateWaitingForUser)
	}
	if step.Message != st.Message || step.Phase != st.Phase {
		l.log.Info("ordered update", "phase", step.Phase, "message", step.Message)
	}
	setRolloutStatus(st, step)
}

// setRolloutStatus writes the step's phase, message and progress time.
func setRolloutStatus(st *v1alpha1.MysqlFailoverGroupStatus, step topology.RolloutStep) {
	st.Phase, st.Message, st.UpdateProgressTime = step.Phase, step.Message, nil
	if !step.ProgressAt.IsZero() {
		t := stamp(step.ProgressAt)
		st.UpdateProgressTime = &t
	}
	st.UpdateSwitchover = nil
	if f := step.Switchover; !f.LastAt.IsZero() {
		st.UpdateSwitchover = &v1alpha1.UpdateSwitchoverStatus{Failures: int32(f.Count),
			LastFailureTime: stamp(f.LastAt), LastFailure: f.Last}
	}
}

// rolloutInput is the pass as PlanRollout reads it.
func (l *Loop) rolloutInput(p failover.Pass, loads map[string]routing.Workload) topology.RolloutInput {
	g := p.Group
	st := &g.Status
	start := &l.patcher.read
	in := topology.RolloutInput{Namespace: g.Namespace, Group: g.Name, ActiveSite: start.ActiveSite,
		Decision: p.Decision.Kind, EmergencyInFlight: st.Failover != nil || start.Failover != nil,
		PlannedRequested: failover.Requested(g) || failover.PlannedInFlight(start), Phase: start.Phase,
		Method: g.Spec.Updates.PrimaryUpdateMethod, Strategy: g.Spec.Updates.PrimaryUpdateStrategy,
		MaxLag: l.env.Options.MaxLag, PeerCheckInterval: p.Settings.PeerCheckInterval, Now: l.env.Clock.Now()}
	in.AuthorityMoved = st.ActiveSite != start.ActiveSite
	if r := runningReclone(st); r != nil {
		in.Recloning = r.Name
	}
	if lf := st.LastFailover; lf != nil {
		in.CooldownEnds = lf.Time.Add(g.Spec.FailoverCooldown.Duration)
	}
	var prev topology.SwitchoverFailures
	if u := st.UpdateSwitchover; u != nil {
		prev = topology.SwitchoverFailures{Count: int(u.Failures), LastAt: u.LastFailureTime.Time, Last: u.LastFailure}
	}
	failedAt, why := failover.UpdateSwitchoverFailed(st)
	in.Switchover = topology.NoteSwitchoverFailure(prev, failedAt, why)
	if t := start.UpdateProgressTime; t != nil {
		in.ProgressAt = t.Time
	}
	in.ProgressDeadline = failover.UpdateDeadline(g)
	if u := l.env.Upgrader; u != nil {
		in.SidecarHash, in.InPlace = u.Hash(), g.Spec.Updates.InPlaceSidecarUpdates
	}
	for _, v := range p.Input.Sites {
		w := loads[v.Name]
		if w.DriftErr != nil {
			l.log.Error(w.DriftErr, "ordered update: drift check", "site", v.Name)
		}
		rs := topology.RolloutSite{View: v, Exists: w.Exists, Stale: w.Stale, Drifted: w.Drifted, PodReady: w.Ready,
			KeepsPods: w.KeepsPods, StrategyDrifted: w.StrategyDrifted, PodDrifted: w.PodDrifted,
			StatusLags:     w.StatusLags,
			SidecarAskedAt: l.sidecarAskedAt(v.Name), SidecarHash: l.reportedHash(v.Name)}
		if u := l.env.Upgrader; u != nil {
			// Settled as soon as the new process reports the shipped hash.
			rs.UpgradeBusy = u.Busy(l.key, v.Name) && rs.SidecarHash != in.SidecarHash
		}
		in.Sites = append(in.Sites, rs)
	}
	return in
}

// updateSite applies the site's Deployment, unless it changed since it was read.
func (l *Loop) updateSite(ctx context.Context, p failover.Pass, w siteWorkloads, step topology.RolloutStep,
	load routing.Workload) error {
	g := p.Group
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	// Ordered through the API server like a promotion's claim
	// (failover/claim.go): the step is written into status exclusively
	// before the apply. A deposed leader paused after its leadership check
	// finds its write refused once the new leader has written the group;
	// if its write lands first, the new leader's own write here is refused.
	// Either way two processes never each restart a site off one snapshot.
	setRolloutStatus(&g.Status, step)
	if err := l.patcher.PersistStatusExclusive(cctx, g); err != nil {
		return fmt.Errorf("ordered update: order the restart of %s: %w", step.Site, err)
	}
	if step.PodRepair {
		if err := w.RepairSitePod(cctx, g, step.Site, load.Pod, load.PodUID, load.PodResourceVersion); err != nil {
			return err
		}
		l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventSitePodRepaired,
			fmt.Sprintf("%s: the images of Pod %s, changed on the Pod, are set back to its Deployment's", step.Message, load.Pod))
		return nil
	}
	if err := w.ApplySiteWorkload(cctx, g, step.Site, load.ResourceVersion); err != nil {
		return err
	}
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventSiteUpdated,
		fmt.Sprintf("%s: the new Pod template is applied to %s", step.Message, step.Site))
	return nil
}

// repairInPlace sets back the Deployments whose repair replaces no Pod
// (topology.RolloutRepair): a strategy someone changed, or a stale or
// drifted Deployment whose Pod template and replica count stay. Each is
// refused if the Deployment changed since it was read, and only a leader
// with fresh observations repairs.
func (l *Loop) repairInPlace(ctx context.Context, p failover.Pass, w siteWorkloads, repairs []topology.RolloutRepair,
	loads map[string]routing.Workload) {
	if err := l.mayRestart(ctx); err != nil {
		l.log.Info("in-place repair held back", "reason", err.Error())
		return
	}
	for _, r := range repairs {
		cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
		rv := loads[r.Site].ResourceVersion
		what, err := "its strategy set back to Recreate", error(nil)
		if r.Strategy {
			err = w.RestoreSiteStrategy(cctx, p.Group, r.Site, rv)
		} else {
			what, err = "its Deployment set back to the rendering", w.ApplySiteWorkload(cctx, p.Group, r.Site, rv)
		}
		cancel()
		if err != nil {
			l.log.Error(err, "in-place repair", "site", r.Site)
			continue
		}
		l.env.Notifier.Event(p.Group, failover.EventNormal, v1alpha1.EventSiteRepaired,
			fmt.Sprintf("%s: %s; no Pod replaced", r.Site, what))
	}
}

// updateSwitchover starts the planned failover that moves the primary role
// off the stale active site; the planned-failover runner takes it on.
func (l *Loop) updateSwitchover(ctx context.Context, p failover.Pass, step topology.RolloutStep) error {
	if _, err := l.planned.m.StartForUpdate(ctx, p, step.Target); err != nil {
		return err
	}
	l.planned.next, l.planned.has = 0, true
	l.env.Notifier.Event(p.Group, failover.EventNormal, v1alpha1.EventUpdateSwitchover, step.Message)
	return nil
}

// mayRestart guards a step that restarts a site: the pass's observations
// are at most two poll intervals old (a paused process planned on the world
// as it was; two, because the act before took part of one) and this process still leads (a former leader must not
// restart a site while the new one restarts another).
func (l *Loop) mayRestart(ctx context.Context) error {
	if age := l.env.Clock.Since(l.observedAt); age > 2*l.interval {
		return fmt.Errorf("%w: the observations are %s old", errStaleRollout, age)
	}
	if l.env.Leader != nil {
		if err := l.env.Leader.Held(ctx); err != nil {
			return fmt.Errorf("%w: %w", errStaleRollout, err)
		}
	}
	return nil
}

// recordBinaryStale sets the SidecarBinaryStale condition from the step,
// with a Warning Event when its message changes. Without a shipped binary
// there is no hash to compare, and no condition.
func (l *Loop) recordBinaryStale(g *v1alpha1.MysqlFailoverGroup, step topology.RolloutStep) {
	st := &g.Status
	if l.env.Upgrader == nil || l.env.Upgrader.Hash() == "" {
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionSidecarBinaryStale)
		return
	}
	c := metav1.Condition{Type: v1alpha1.ConditionSidecarBinaryStale, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonSidecarBinaryCurrent, ObservedGeneration: g.Generation,
		Message:            "every sidecar that reported runs the operator's binary, or is upgraded in place",
		LastTransitionTime: stamp(l.env.Clock.Now())}
	if len(step.BinaryStale) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1alpha1.ReasonSidecarBinaryDiffers, step.BinaryMessage
		l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.EventSidecarBinaryStale, step.BinaryMessage)
	} else {
		l.env.Notifier.clearOnChange(g, v1alpha1.EventSidecarBinaryStale)
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// recordStalled sets the UpdateStalled condition from the step, with a
// Warning Event once per stall (per progress time: what the update waits
// for may change while it stays stalled).
func (l *Loop) recordStalled(g *v1alpha1.MysqlFailoverGroup, step topology.RolloutStep) {
	c := metav1.Condition{Type: v1alpha1.ConditionUpdateStalled, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonUpdateProgressing, ObservedGeneration: g.Generation,
		Message:            "no ordered update is in progress, or it took a step within its progress deadline",
		LastTransitionTime: stamp(l.env.Clock.Now())}
	if step.Stalled {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, step.StalledReason, step.StalledMessage
		if !l.stalledSince.Equal(step.ProgressAt) {
			l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventUpdateStalled, step.StalledMessage)
			l.log.Info("ordered update stalled", "message", step.StalledMessage)
		}
		l.stalledSince = step.ProgressAt
	} else {
		l.stalledSince = time.Time{}
	}
	meta.SetStatusCondition(&g.Status.Conditions, c)
}

// recordDrift records a Warning Event, once per change of the list, naming
// the sites whose Deployment was edited by hand and is rolled back.
func (l *Loop) recordDrift(g *v1alpha1.MysqlFailoverGroup, step topology.RolloutStep) {
	if len(step.Drifted) == 0 {
		l.env.Notifier.clearOnChange(g, v1alpha1.EventSiteDrifted)
		return
	}
	msg := fmt.Sprintf("the Deployment of %s was changed outside the operator (its spec is not what the group renders); "+
		"the ordered update rolls it back, one site at a time", strings.Join(step.Drifted, ", "))
	l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.EventSiteDrifted, msg)
}
