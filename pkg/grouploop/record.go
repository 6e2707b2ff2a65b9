package grouploop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// record writes the pass's observations and conditions to status (skipped
// when nothing changed) and to the metrics.
func (l *Loop) record(ctx context.Context, p failover.Pass) {
	g := p.Group
	st := &g.Status
	st.ObservedGeneration = g.Generation
	if h := l.env.Options.OperatorExecutableHash; h != "" {
		st.OperatorExecutableHash = h
	}
	l.recordSites(g)
	l.markHistory(g, p.Decision)
	l.recordConditions(g, p.Decision)
	l.recordProgress(g, p)
	l.noteSemiSyncMetrics(g)
	l.env.Auth.MarkAuthenticated(g, l.env.Clock.Now())
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "write status")
		return
	}
	l.env.Registry.Publish(g)
}

// recordSites fills status.sites in spec order from the debouncers and the
// fresh probes; an unreachable site keeps its last GTIDs and fence mark.
func (l *Loop) recordSites(g *v1alpha1.MysqlFailoverGroup) {
	st := &g.Status
	start := &l.patcher.read
	out := make([]v1alpha1.SiteStatus, 0, len(g.Spec.Sites))
	for _, s := range g.Spec.Sites {
		rec := *failover.SiteRecord(st, s.Name)
		acted := rec.Fenced
		d := l.deb[s.Name]
		// A site that never answered shows unknown and records no
		// transition: a transition on record means it answered once.
		rec.State = topology.ShownState(d.State(), !l.answeredOnce(g, s.Name))
		if since := d.Since(); !since.IsZero() && rec.State == d.State() {
			t := stamp(since)
			rec.LastTransitionTime = &t
		}
		if o := l.obs[s.Name]; o.err == nil {
			l.recordProbe(g, &rec, o)
			active := s.Name == start.ActiveSite || s.Name == st.ActiveSite
			rec.Fenced = fencedMark(failover.HeldReadOnly(start, s.Name), acted, active, rec.Fenced)
			// The active site seen writable: a promotion's unclear outcome is clear now.
			rec.MaybeWritable = rec.MaybeWritable && !(s.Name == st.ActiveSite && o.status.Writable())
		}
		if h := l.reportedHash(s.Name); h != "" {
			rec.SidecarExecutableHash = h
		}
		l.env.Metrics.setSiteState(g.Namespace, g.Name, s.Name, rec.State)
		out = append(out, rec)
	}
	st.Sites = out
}

// fencedMark is a reachable site's status.sites[].fenced after a pass. The
// mark is fence evidence: a marked site that goes unreachable counts as
// unable to write (failover.HeldReadOnly, read by Decide's site views and
// by planned promotion). The probe (probeReadOnly) was taken before the
// pass acted, so it cannot see what the act did:
//   - when the act changed the mark (from start to acted), the act's mark
//     stands: it fenced the site by SQL, or cleared the mark before making
//     the site writable;
//   - for the active site, at the pass's start or end, the probe may clear
//     the mark but never set it: the operator only ever makes the active
//     site writable (promotion, re-assertion, rollback), and does so without
//     touching a mark that was not set;
//   - any other site is marked when the probe saw it read-only.
//
// The price is that an active site found read-only without the operator
// fencing it (booted fenced, or fenced by its sidecar) is not held
// read-only: should it go unreachable, it waits for other evidence.
func fencedMark(start, acted, active, probeReadOnly bool) bool {
	switch {
	case acted != start:
		return acted
	case active:
		return acted && probeReadOnly
	}
	return probeReadOnly
}

func (l *Loop) recordProbe(g *v1alpha1.MysqlFailoverGroup, rec *v1alpha1.SiteStatus, o observation) {
	ms := o.status
	rec.GtidExecuted = ms.Executed.String()
	if id := serverID(ms); id != "" {
		rec.ServerID = id
	}
	rec.Fenced = !ms.Writable()
	recordSemiSync(rec, ms)
	rec.Replicating, rec.SecondsBehindSource, rec.ReplicationError = false, nil, ""
	rs := ms.Replica
	if rs == nil {
		l.env.Metrics.ReplicationLag.DeleteLabelValues(g.Namespace, g.Name, rec.Name)
		l.env.Metrics.Replicating.DeleteLabelValues(g.Namespace, g.Name, rec.Name)
		return
	}
	rec.Replicating = rs.Healthy()
	l.env.Metrics.Replicating.WithLabelValues(g.Namespace, g.Name, rec.Name).Set(boolGauge(rec.Replicating))
	if err := rs.Err(); err != nil {
		rec.ReplicationError = err.Error()
	}
	if rs.SecondsBehind >= 0 {
		lag := rs.SecondsBehind
		rec.SecondsBehindSource = &lag
		l.env.Metrics.ReplicationLag.WithLabelValues(g.Namespace, g.Name, rec.Name).Set(float64(lag))
	}
}

// recordConditions sets Ready, Degraded and FailoverBlocked from the
// decision, and records a FailoverBlocked Event when the block changes.
func (l *Loop) recordConditions(g *v1alpha1.MysqlFailoverGroup, d topology.Decision) {
	st := &g.Status
	now := stamp(l.env.Clock.Now())
	set := func(typ string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: g.Generation, LastTransitionTime: now})
	}
	// Serving means the active site is observed writable: Healthy, or Degraded
	// for a peer's sake. Degraded/NotReady is an active site not observed yet.
	degradedServing := d.Kind == topology.KindDegraded && d.Reason != v1alpha1.ReasonNotReady
	serving := (d.Kind == topology.KindHealthy || degradedServing) && st.Failover == nil
	readyReason := v1alpha1.ReasonHealthy
	switch {
	case st.Failover != nil:
		readyReason = v1alpha1.ReasonFailoverRunning
	case !serving:
		readyReason = d.Reason
	}
	set(v1alpha1.ConditionReady, serving, readyReason, d.Message)
	degraded, reason, why := d.Kind != topology.KindHealthy, d.Reason, d.Message
	if waiting := recoveryBlocked(g); waiting != "" && (!degraded || reason == v1alpha1.ReasonDivergence) {
		degraded, reason, why = true, v1alpha1.ReasonRecoveryBlocked, waiting
	}
	set(v1alpha1.ConditionDegraded, degraded, reason, why)
	semiDegraded, semiReason, semiMsg := l.semiSyncCondition(g)
	set(v1alpha1.ConditionSemiSyncDegraded, semiDegraded, semiReason, semiMsg)
	spec := g.Spec.MySQL.SemiSync
	unavailable, unReason, unMsg := topology.SemiSyncAvailability(spec.Enabled,
		spec.DataDurability == v1alpha1.DurabilityRequired, l.semiSyncSupport(g))
	set(v1alpha1.ConditionSemiSyncUnavailable, unavailable, unReason, unMsg)
	l.env.Metrics.FailoverBlocked.DeletePartialMatch(map[string]string{labelNamespace: g.Namespace, labelGroup: g.Name})
	if d.Kind != topology.KindFailoverBlocked {
		set(v1alpha1.ConditionFailoverBlocked, false, v1alpha1.ReasonNotBlocked, "no failover is blocked")
		l.env.Notifier.clearOnChange(g, v1alpha1.EventFailoverBlocked)
		return
	}
	msg := fmt.Sprintf("%s blocked: %s", d.Wanted, d.Message)
	set(v1alpha1.ConditionFailoverBlocked, true, d.Reason, msg)
	l.env.Metrics.FailoverBlocked.WithLabelValues(g.Namespace, g.Name, d.Reason).Set(1)
	l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.EventFailoverBlocked, d.Reason+": "+msg)
}

// accountLoss fills lastFailover.transactionsLost once the old primary can
// be read again, read-only, after the failover.
func (l *Loop) accountLoss(g *v1alpha1.MysqlFailoverGroup) {
	st := &g.Status
	lf := st.LastFailover
	if lf == nil || failover.LossAccounted(lf) {
		return
	}
	for _, site := range slices.Clone(lf.AbandonedLossPending) {
		before := lossCount(lf)
		if o, ok := l.readAfter(lf, site); ok && failover.AccountAbandonedLoss(st, site, o.status.Executed) && lossCount(lf) > before {
			l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventTransactionsLost,
				fmt.Sprintf("failover %s -> %s lost %d transactions of its abandoned target %s (%d counted so far): %s",
					lf.From, lf.To, lossCount(lf)-before, site, lossCount(lf), lf.LostGtidSet))
		}
	}
	if lf.From == lf.To {
		failover.AccountLoss(st, gtid.Set{}) // the old primary is the new one: nothing to read
		return
	}
	o, ok := l.readAfter(lf, lf.From)
	if ok && failover.AccountLoss(st, o.status.Executed) && *lf.TransactionsLost > 0 {
		l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventTransactionsLost,
			fmt.Sprintf("failover %s -> %s lost %d transactions: %s", lf.From, lf.To, *lf.TransactionsLost, lf.LostGtidSet))
	}
}

// readAfter returns this pass's read of site when it holds all the site
// wrote before failover lf: only a read taken after the failover ended, of
// a site that no longer writes, does; a read from the same pass as the
// promotion may predate its last commits. The record's time has whole
// seconds, so a read counts as after it one second later.
func (l *Loop) readAfter(lf *v1alpha1.FailoverRecord, site string) (observation, bool) {
	o := l.obs[site]
	if o.err != nil || o.at.IsZero() || o.at.Before(lf.Time.Add(time.Second)) || o.status.Writable() {
		return o, false
	}
	return o, true
}

// lossCount is lf's transactionsLost, 0 while absent.
func lossCount(lf *v1alpha1.FailoverRecord) int64 {
	if lf.TransactionsLost == nil {
		return 0
	}
	return *lf.TransactionsLost
}

// markDivergence persists the divergent GTIDs Decide found, once per site:
// a marked site never rejoins by itself.
func (l *Loop) markDivergence(g *v1alpha1.MysqlFailoverGroup, d topology.Decision) {
	for _, dv := range d.Divergent {
		l.markDiverged(g, dv, fmt.Sprintf("site %s holds transactions active site %s never saw: %s; it will not rejoin",
			dv.Site, g.Status.ActiveSite, dv.GTIDs))
	}
}

// markDiverged persists one site's divergent GTIDs, once (a marked site
// never rejoins by itself), with a DivergenceDetected Event saying msg.
func (l *Loop) markDiverged(g *v1alpha1.MysqlFailoverGroup, dv topology.Divergence, msg string) {
	rec := failover.SiteRecord(&g.Status, dv.Site)
	if rec.DivergentGtid != "" || dv.GTIDs.IsEmpty() {
		return
	}
	rec.DivergentGtid = dv.GTIDs.String()
	l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventDivergenceDetected, msg)
}

// withoutOwn drops the transactions of source id from set.
func withoutOwn(set gtid.Set, id string) gtid.Set {
	ivs := set.Intervals(id)
	if id == "" || len(ivs) == 0 {
		return set
	}
	parts := make([]string, len(ivs))
	for i, iv := range ivs {
		parts[i] = iv.String()
	}
	own, err := gtid.ParseSet(id + ":" + strings.Join(parts, ":"))
	if err != nil {
		return set
	}
	return set.Subtract(own)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
