package scenario

import (
	"context"
	"fmt"
	"time"
)

func init() {
	register(Scenario{13, "forged-messages", "the primary is cut off; a client forges its fenced=true report and an impostor serves it a huge generation on its peer's port: no early promotion, never two writers, both refused and counted", forgedMessages})
}

// The counters the operator and the sidecars keep of what they refused.
const (
	metricRejectedReports = "bloodraven_rejected_reports_total"
	metricRejectedViews   = "bloodraven_sidecar_rejected_views_total"
)

func forgedMessages(ctx context.Context, e *Env) Result {
	return play(ctx, e, "forged-messages", Plan{}, forgeMessages)
}

// forgeMessages cuts site-a off from the operator and from site-b, as in
// isolated-primary; at the cut a forger starts sending the operator
// site-a's fenced=true report, and an impostor starts answering on site-b's
// peer port with a view of the highest generation naming site-a. Nobody may
// believe either: site-b is promoted only after site-a's lease has run out
// (never before cut + leaseTimeout: site-a's last renewal was at most one
// peerCheckInterval before the cut, and the operator waits leaseTimeout plus
// one interval after it), site-a stops acknowledging by then, and the
// operator and site-a's sidecar count what they refused.
func forgeMessages(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	w := g.watch(ctx)
	defer w.stop()
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	im, err := g.startImpostor(ctx, b, a)
	defer func() { im.stop() }()
	if err != nil {
		return err
	}
	fg, err := g.startForger(ctx, a)
	defer func() { fg.stop() }()
	if err != nil {
		return err
	}
	// Promoted: site-b takes a direct write. (Ready may never come: with
	// the attack working, site-a stays writable too.)
	if _, err := l.WaitAck(ctx, b, true, cut, 2*time.Minute); err != nil {
		return err
	}
	// Keep the attack on until site-a's lease is over by any count.
	if err := sleepCtx(ctx, time.Until(cut.Add(g.T.LeaseTimeout+3*g.T.PeerCheckInterval))); err != nil {
		return err
	}
	viewA := g.viewNote(ctx, a)
	reports, views := g.rejected(ctx, a)
	served, hellos := im.stop()
	accepted, forged := fg.stop()
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	// Judge whatever happens next: the attack may leave no failover record.
	lost := int64(0)
	if mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported); err != nil {
		r.Failf("%v (status %s)", err, g.statusNote(ctx))
	} else {
		lost = *mg.Status.LastFailover.TransactionsLost
	}
	r.finish(ctx, l, lost)
	r.Notef("forged reports: %s", forged)
	r.Notef("impostor: %d TLS handshakes begun, %d views served; %s's sidecar holds %s", hellos, served, a, viewA)
	r.Notef("status: %s", history(w.stop(), cut))
	judgeForgery(g, l, r, cut, accepted)
	if !reports.Found || reports.Sum == 0 {
		r.Failf("the operator counted no refused report (%s): nothing refused the forged fenced=true reports", reports)
	}
	if !views.Found || views.Sum == 0 {
		r.Failf("%s's sidecar counted no refused view (%s): nothing refused the impostor's generation %d", a, views, int64(impostorGeneration))
	}
	return nil
}

// judgeForgery checks the moments: site-b's first acknowledged write after
// the cut against site-a's earliest possible lease deadline, and site-a's
// last acknowledged write against its latest one.
func judgeForgery(g *Group, l *Load, r *Result, cut time.Time, accepted map[string]int) {
	a, b := g.Sites[0], g.Sites[1]
	earliest := cut.Add(g.T.LeaseTimeout)
	if first, ok := firstAckOn(&l.hist, b, cut); ok && first.Start.Before(earliest) {
		r.Broken++
		r.Failf("%s took writes %.2fs after the cut, before %s's lease could have run out (%s): the operator believed "+
			"a forged report (%d over plain HTTP, %d over HTTPS answered 2xx)", b, first.End.Sub(cut).Seconds(), a,
			g.T.LeaseTimeout, accepted["http"], accepted["https"])
	} else if ok {
		r.Notef("%s took writes %.2fs after the cut", b, first.End.Sub(cut).Seconds())
	}
	latest := cut.Add(g.T.LeaseTimeout + g.T.PeerCheckInterval)
	if last, ok := lastAckOn(&l.hist, a); ok && last.End.After(latest) {
		r.Broken++
		r.Failf("%s acknowledged writes until %.2fs after the cut, past its lease (%s + one %s tick): "+
			"the impostor's view renewed it", a, last.End.Sub(cut).Seconds(), g.T.LeaseTimeout, g.T.PeerCheckInterval)
	}
}

// viewNote describes the view a site's sidecar holds, for a note.
func (g *Group) viewNote(ctx context.Context, site string) string {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := g.sidecarView(cctx, site)
	if err != nil {
		return fmt.Sprintf("no view (%v)", err)
	}
	return fmt.Sprintf("generation %d naming %s (source %s)", v.Generation, v.ActiveSite, v.Source)
}

// rejected reads the operator's count of refused reports and site's
// sidecar's count of refused views. A read that fails comes back not found.
func (g *Group) rejected(ctx context.Context, site string) (counter, counter) {
	reports, views := counter{Name: metricRejectedReports}, counter{Name: metricRejectedViews}
	if pod, err := g.e.operatorPodObject(ctx); err != nil {
		g.e.Logf("operator metrics: %v", err)
	} else if c, err := g.e.scrape(ctx, pod, reports.Name); err != nil {
		g.e.Logf("operator metrics: %v", err)
	} else {
		reports = c
	}
	if pod, err := g.sitePodObject(ctx, site); err != nil {
		g.e.Logf("%s sidecar metrics: %v", site, err)
	} else if c, err := g.e.scrape(ctx, pod, views.Name); err != nil {
		g.e.Logf("%s sidecar metrics: %v", site, err)
	} else {
		views = c
	}
	return reports, views
}

// statusNote summarises the group's status for a failure message.
func (g *Group) statusNote(ctx context.Context) string {
	mg, err := g.Get(ctx)
	if err != nil {
		return err.Error()
	}
	st := mg.Status
	step := ""
	if st.Failover != nil {
		step = fmt.Sprintf("; failover to %s at step %s", st.Failover.To, st.Failover.Step)
	}
	return fmt.Sprintf("active %s generation %d%s; writable %v", st.ActiveSite, st.TopologyGeneration, step,
		sightingOf(mg, time.Now()).Writable)
}
