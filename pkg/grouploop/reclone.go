package grouploop

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Reclone on request (docs/recovery.md). The reclone-site annotation is
// judged by topology.DecideReclone; an accepted request becomes
// status.sites[].recovery, whose phases run one per pass, each persisted
// before its work begins, so a restarted operator resumes at the phase
// persisted last:
//   - Requested: accepted, nothing touched yet;
//   - PreservingData: the site's sidecar saves the binlogs holding the
//     errant transactions and the GTID set (diverged sites only);
//   - Cloning: the sidecar stops mysqld, empties the datadir, seeds it from
//     the donor (pkg/clone's Receiver) and lets mysqld start again;
//   - CatchingUp: the operator waits until the site replicates and holds
//     the active site's set as of the phase's start (topology.RecloneCaughtUp);
//   - Rejoined, or Failed with a reason.
// The work on the site goes through a Recloner; without one a reclone
// fails in Requested, with nothing touched.

// RecloneStep is one phase's work, asked of a site's sidecar.
type RecloneStep struct {
	Phase v1alpha1.RecoveryPhase
	// Request identifies the reclone (the annotation value and when it was
	// accepted), so that the sidecar tells a resumed phase from a new one.
	Request       string
	Donor         string
	DivergentGtid string
	// DonorGtid is the donor's executed set in status (Cloning): the
	// clone keeps the donor's history of other servers from it.
	DonorGtid string
	// Generation is the topology generation the operator holds: a sidecar
	// holding a newer view refuses the step.
	Generation int64
	// Accepted is the reclone's StartTime: a sidecar refuses a new
	// reclone accepted before the one it has on record.
	Accepted time.Time
}

// RecloneProgress is where a phase stands on the site.
type RecloneProgress struct {
	// Done is true once the phase's work finished on the site.
	Done bool
	// Failed, when not empty, says why the phase cannot finish: the
	// reclone fails. A transport error is not a failure: it is asked again.
	Failed string
	// PreservedAt is where PreservingData saved the errant transactions.
	PreservedAt string
}

// Recloner runs a reclone's phases on a site. Run starts the phase or
// reports its progress, and returns at once; asking again is safe. A
// sidecar that cannot reclone (an older version) is ErrRecloneUnsupported.
// Requested is asked too: it touches nothing, and tells whether the site
// can be recloned at all.
type Recloner interface {
	Run(ctx context.Context, group types.NamespacedName, site string, step RecloneStep) (RecloneProgress, error)
}

// reclone answers a reclone-site request and moves a running reclone on by
// one phase. Only a leader with fresh observations acts (mayRestart).
func (l *Loop) reclone(ctx context.Context, p failover.Pass) {
	g := p.Group
	value, asked := g.Annotations[v1alpha1.RecloneSiteAnnotation]
	running := runningReclone(&g.Status)
	if !asked && running == nil {
		return
	}
	if err := l.mayRestart(ctx); err != nil {
		return
	}
	if asked {
		if why := unsettled(p); why != "" {
			// Judged next pass, on observations that include this pass's act.
			l.log.V(1).Info("reclone request waits a pass", "request", value, "why", why)
			return
		}
		l.answerReclone(ctx, p, value, running)
	}
	if running != nil && !running.Recovery.Phase.Terminal() {
		// A request left in place (its removal failing) never stalls the
		// running reclone.
		l.advanceReclone(ctx, p, running)
	}
}

// unsettled says how this pass's act moved what a reclone request is judged
// on (the active site, a failover of either kind), "" when it did not. The
// pass's Input was built before the act: a request judged on it could clone
// over a site the act just began to promote.
func unsettled(p failover.Pass) string {
	st, in := &p.Group.Status, p.Input
	switch {
	case st.ActiveSite != in.ActiveSite:
		return fmt.Sprintf("the active site moved from %q to %q", in.ActiveSite, st.ActiveSite)
	case (failover.InFlight(st) == nil) != (in.InFlight == nil):
		return "an emergency failover started or ended"
	case failover.PlannedInFlight(st) != in.PlannedInFlight:
		return "a planned failover started or ended"
	}
	return ""
}

// runningReclone is the site whose reclone is not over, nil when none.
func runningReclone(st *v1alpha1.MysqlFailoverGroupStatus) *v1alpha1.SiteStatus {
	for i := range st.Sites {
		if r := st.Sites[i].Recovery; r != nil && !r.Phase.Terminal() {
			return &st.Sites[i]
		}
	}
	return nil
}

// answerReclone judges the request: a refusal is recorded and the request
// removed; an acceptance persists Requested, then removes the request. A
// request already accepted (the operator stopped before removing it) is
// only removed.
func (l *Loop) answerReclone(ctx context.Context, p failover.Pass, value string, running *v1alpha1.SiteStatus) {
	g := p.Group
	if answered(g, running, value, l.recloneUnremoved) {
		l.clearRecloneRequest(ctx, g, value)
		return
	}
	ask := topology.RecloneAsk{Group: g.Name, Value: value, Divergent: map[string]string{},
		Updating: g.Status.Phase == v1alpha1.GroupPhaseUpdating, Decided: p.Decision.Kind}
	for _, s := range g.Status.Sites {
		ask.Divergent[s.Name] = s.DivergentGtid
	}
	if lf := g.Status.LastFailover; lf != nil {
		ask.LossUnread = slices.Clone(lf.AbandonedLossPending)
	}
	if from := failover.LossPendingFrom(&g.Status); from != "" {
		ask.LossUnread = append(ask.LossUnread, from)
	}
	if running != nil {
		ask.Running, ask.RunningPhase = running.Name, running.Recovery.Phase
	}
	v := topology.DecideReclone(p.Input, ask)
	if v.Accepted() && v.Request.Cancel {
		// The request is removed only once the cancel is in status: else
		// the reclone would go on with the person's cancel gone.
		if l.failReclone(ctx, g, v.Request.Site, v1alpha1.ReasonRecloneCancelled,
			fmt.Sprintf("cancelled (%q) before the site's data was touched", value)) {
			l.clearRecloneRequest(ctx, g, value)
		}
		return
	}
	if v.Accepted() && l.env.Recloner == nil {
		v.Reason, v.Message = v1alpha1.ReasonRecloneUnavailable,
			"this operator has no reclone executor (the sidecars' reclone endpoint is not built); nothing was touched"
	}
	if !v.Accepted() {
		l.rejectReclone(ctx, g, value, v)
		return
	}
	now := stamp(l.env.Clock.Now())
	rec := failover.SiteRecord(&g.Status, v.Request.Site)
	rec.Recovery = &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryRequested, Request: value, Donor: v.Donor.Site,
		DivergentGtid: rec.DivergentGtid, DataIncomplete: rec.Recovery.Holds(), StartTime: &now, PhaseStartTime: &now,
		Message: fmt.Sprintf("reclone of %s from %s accepted", v.Request.Site, v.Donor.Site)}
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "persist the accepted reclone", "site", v.Request.Site)
		return
	}
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventRecloneRequested,
		fmt.Sprintf("reclone of %s requested (%q); donor %s", v.Request.Site, value, v.Donor.Site))
	l.log.Info("reclone accepted", "site", v.Request.Site, "donor", v.Donor.Site)
	l.clearRecloneRequest(ctx, g, value)
}

// answered reports whether value is the request of the running reclone,
// or the request of a reclone that rejoined whose removal this process
// saw fail (unremoved): it is only removed, never run twice. Any other
// request repeating a rejoined reclone's value is a new request, judged
// like any: the confirm form allows one value per site, so a second
// reclone of the same site can be asked for no other way. A request
// repeating a failed reclone's value is judged again: that is how a person
// retries. (An operator restarted while a removal kept failing runs such a
// leftover again, visibly: docs/recovery.md.)
func answered(g *v1alpha1.MysqlFailoverGroup, running *v1alpha1.SiteStatus, value, unremoved string) bool {
	if running != nil {
		return running.Recovery.Request == value
	}
	if value != unremoved {
		return false
	}
	for _, s := range g.Status.Sites {
		if r := s.Recovery; r != nil && r.Phase == v1alpha1.RecoveryRejoined && r.Request == value {
			return true
		}
	}
	return false
}

// rejectReclone records a refused request in status, counts and reports
// it, and removes it. Nothing else changes.
func (l *Loop) rejectReclone(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, value string, v topology.RecloneVerdict) {
	g.Status.LastRecloneRejection = &v1alpha1.RecloneRejection{Request: value, Reason: v.Reason,
		Message: v.Message, Time: stamp(l.env.Clock.Now())}
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "persist the refused reclone")
		return
	}
	l.env.Metrics.Reclones.WithLabelValues(g.Namespace, g.Name, recloneRejected).Inc()
	l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventRecloneRejected,
		fmt.Sprintf("reclone-site=%q refused: %s: %s", value, v.Reason, v.Message))
	l.log.Info("reclone refused", "request", value, "reason", v.Reason, "message", v.Message)
	l.clearRecloneRequest(ctx, g, value)
}

func (l *Loop) clearRecloneRequest(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, value string) {
	a := &annotator{c: l.env.Client, reader: l.env.Reader}
	if err := a.clear(ctx, g, v1alpha1.RecloneSiteAnnotation, value); err != nil {
		l.recloneUnremoved = value
		l.log.Error(err, "remove the reclone-site annotation")
		return
	}
	if l.recloneUnremoved == value {
		l.recloneUnremoved = ""
	}
}

// Results of bloodraven_reclone_operations_total.
const (
	recloneRejected = "rejected"
	recloneRejoined = "rejoined"
	recloneFailed   = "failed"
)

// divergentCount is how many transactions a divergentGtid names (0 when
// none or unreadable).
func divergentCount(s string) float64 {
	set, err := gtid.ParseSet(s)
	if s == "" || err != nil {
		return 0
	}
	return float64(set.Count())
}

// holdRecloning marks the views of the sites a reclone holds as fenced by
// an administrator: while a site's data is being saved or replaced, and
// after a reclone failed once its data may be partly replaced, it is never
// a failover candidate, a donor, nor re-asserted; never the active site
// nor a failover's target (topology.RecloneHolds).
func holdRecloning(g *v1alpha1.MysqlFailoverGroup, in topology.Input) {
	planned := ""
	if b := g.Status.PlannedFailover; b != nil {
		planned = b.Target
	}
	for i := range in.Sites {
		if topology.RecloneHolds(in, planned, in.Sites[i].Name, failover.SiteStatusOf(&g.Status, in.Sites[i].Name).Recovery) {
			in.Sites[i].AdminFenced, in.Sites[i].DataReplaced = true, true
		}
	}
}

// recoveryBlocked is the Degraded condition's RecoveryBlocked override:
// the diverged sites no reclone runs for, "" when none.
func recoveryBlocked(g *v1alpha1.MysqlFailoverGroup) string {
	div, running, order := map[string]string{}, map[string]bool{}, make([]string, 0, len(g.Spec.Sites))
	for _, s := range g.Status.Sites {
		div[s.Name] = s.DivergentGtid
		running[s.Name] = s.Recovery != nil && !s.Recovery.Phase.Terminal()
		if s.Recovery.Holds() && !running[s.Name] { // it waits like a diverged site
			div[s.Name] = "its reclone failed in " + string(s.Recovery.FailedPhase)
			if s.Recovery.DataIncomplete {
				div[s.Name] = "an earlier reclone left its data incomplete"
			}
		}
	}
	for _, s := range g.Spec.Sites {
		order = append(order, s.Name)
	}
	waiting := topology.RecoveryWaiting(order, div, running)
	if len(waiting) == 0 {
		return ""
	}
	return fmt.Sprintf("diverged sites wait for a person to ask for their reclone (kubectl bloodraven reclone): %v", waiting)
}
