package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{10, "lagging-replica-loss", "the replica lags in its relay log and then loses its feed; the primary dies: relay drained, then promotion, loss reported", laggingReplicaLoss})
	register(Scenario{11, "planned-lag-timeout", "a planned failover to a replica that does not catch up rolls back", plannedLagTimeout})
	register(Scenario{12, "dns-follow", "a client that resolves the DNS name follows the flip", dnsFollow})
}

func laggingReplicaLoss(ctx context.Context, e *Env) Result {
	return play(ctx, e, "lagging-replica-loss", Plan{}, laggingReplicaLossBody)
}

func laggingReplicaLossBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	e := g.e
	a, b := Sites[0], Sites[1]
	admin, err := g.admin(ctx)
	if err != nil {
		return err
	}
	// A global read lock on site-b holds its SQL thread: events pile up in
	// the relay log (received, not applied).
	release, err := admin.Hold(ctx, g.SiteAddrs()[b], "FLUSH TABLES WITH READ LOCK")
	if err != nil {
		return fmt.Errorf("lock %s: %w", b, err)
	}
	defer func() { release() }()
	l.Mark("relay-lag")
	if err := sleepCtx(ctx, 3*time.Second); err != nil {
		return err
	}
	// Then site-b stops receiving: what site-a commits from now on is lost.
	cut := l.Mark("cut-feed")
	if err := e.C.Partition(ctx, a, b); err != nil {
		return err
	}
	if err := sleepCtx(ctx, time.Second); err != nil {
		return err
	}
	podA, _, err := g.Pod(ctx, a)
	if err != nil {
		return err
	}
	l.Mark("kill")
	if err := e.C.Kill(ctx, g.NS, podA, "mysqld"); err != nil {
		return err
	}
	// The failover waits on the relay drain; let it wait a little, then unlock.
	if _, err := g.inFlight(ctx, time.Minute); err != nil {
		return err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	unlock := l.Mark("unlock")
	release()
	release = func() {}
	*r = lagOutcome(ctx, g, l, r, cut)
	// The promotion waited for the relay log: site-b took no write before
	// its SQL thread could apply what it had received.
	if first, ok := firstAckOn(&l.hist, b, cut); ok && first.End.Before(unlock) {
		r.Failf("%s acknowledged id %d before the relay log could drain", b, first.ID)
	}
	return nil
}

// lagOutcome waits for the promotion and the loss report, and checks that
// the loss is exactly what site-a committed after the feed was cut.
func lagOutcome(ctx context.Context, g *Group, l *Load, r *Result, cut time.Time) Result {
	a, b := Sites[0], Sites[1]
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return r.fail(err)
	}
	if err := g.promotedTakesWrites(ctx, l, b, cut); err != nil {
		return r.fail(err)
	}
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return r.fail(err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return r.fail(err)
	}
	g.writesAfterHeal(ctx, l, r, b, cut)
	reported := *mg.Status.LastFailover.TransactionsLost
	h := r.stop(ctx, l)
	rep := r.judgeLoss(g, h, reported, a, cut)
	if g.SemiSync == semiSyncRequired {
		return *r
	}
	// Committed but unacknowledged writes on site-a count in the report too.
	unsure := unacknowledgedOn(h, a, cut)
	if n := int64(len(rep.Lost)); reported < n || reported > n+int64(unsure) {
		r.Failf("transactionsLost %d, but %d acknowledged writes were lost (and %d more unacknowledged may have committed)",
			reported, n, unsure)
	}
	if reported == 0 {
		r.Failf("nothing lost: the feed cut should have cost site-a's last writes")
	}
	for _, a := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if a.OK && a.Site == Sites[0] && a.End.Before(cut) && lostID(rep, a.ID) {
			r.Failf("id %d acknowledged before the feed was cut was lost: the relay log was not drained", a.ID)
			break
		}
	}
	r.Notef("transactionsLost %d, %d acknowledged writes lost, %d unsure", reported, len(rep.Lost), unsure)
	return *r
}

func lostID(rep *load.Report, id int64) bool {
	for _, x := range rep.Lost {
		if x == id {
			return true
		}
	}
	return false
}

// unacknowledgedOn counts failed attempts that reached site after t (their
// session was open, so they may have committed).
func unacknowledgedOn(h *load.History, site string, t time.Time) int {
	n := 0
	for _, a := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if !a.OK && a.Site == site && a.Start.After(t) {
			n++
		}
	}
	return n
}

func plannedLagTimeout(ctx context.Context, e *Env) Result {
	return play(ctx, e, "planned-lag-timeout", Plan{}, plannedLagTimeoutBody)
}

func plannedLagTimeoutBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := Sites[0], Sites[1]
	admin, err := g.admin(ctx)
	if err != nil {
		return err
	}
	// A global read lock on site-b holds its SQL thread (which keeps
	// running, so the operator leaves it be): site-b falls behind.
	release, err := admin.Hold(ctx, g.SiteAddrs()[b], "FLUSH TABLES WITH READ LOCK")
	if err != nil {
		return fmt.Errorf("lock %s: %w", b, err)
	}
	defer func() { release() }()
	if err := sleepCtx(ctx, time.Second); err != nil {
		return err
	}
	asked := l.Mark("annotate")
	if err := g.annotate(ctx, b+":maxLagWait=3s"); err != nil {
		return err
	}
	p, err := g.waitPlanned(ctx, time.Minute)
	if err != nil {
		return err
	}
	if p.Phase != v1alpha1.PhaseFailed || p.Reason != "LagTimeout" {
		r.Failf("planned failover %s/%s (%s), want Failed/LagTimeout", p.Phase, p.Reason, p.Message)
	}
	if err := g.WaitActive(ctx, a, 1, 30*time.Second); err != nil {
		r.Failf("not rolled back to %s: %v", a, err)
	}
	if _, err := l.WaitAck(ctx, a, false, time.Now(), 30*time.Second); err != nil {
		r.Failf("writes do not resume on %s: %v", a, err)
	}
	release()
	release = func() {}
	rep := r.finish(ctx, l, -1)
	for _, x := range l.hist.Attempts {
		if x.OK && x.Site == b {
			r.Failf("%s acknowledged write %d: it was never to be promoted", b, x.ID)
			break
		}
	}
	r.Notef("rolled back after %.1fs; longest unavailability %s", time.Since(asked).Seconds(), rep.MaxWindow.Round(time.Millisecond))
	return nil
}

func dnsFollow(ctx context.Context, e *Env) Result {
	return play(ctx, e, "dns-follow", Plan{}, dnsFollowBody)
}

func dnsFollowBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := Sites[0], Sites[1]
	svcA, errA := g.ClusterIP(ctx, g.Name+"-"+a)
	svcB, errB := g.ClusterIP(ctx, g.Name+"-"+b)
	if errA != nil || errB != nil {
		return fmt.Errorf("site services: %v %v", errA, errB)
	}
	asked := l.Mark("annotate")
	if err := g.annotate(ctx, b); err != nil {
		return err
	}
	if err := g.WaitDNS(ctx, b, 30*time.Second); err != nil {
		return err
	}
	flipped := l.Mark("dns-flipped")
	if _, err := l.WaitAck(ctx, b, false, flipped, 10*time.Second); err != nil {
		return err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	r.finish(ctx, l, -1)
	var before, after int
	for _, x := range l.hist.Attempts {
		switch {
		case !x.OK:
		case x.Site == a && strings.HasPrefix(x.Addr, svcA+":") && x.Start.Before(asked):
			before++
		case x.Site == b && strings.HasPrefix(x.Addr, svcB+":"):
			after++
		case x.Start.After(flipped):
			r.Failf("write %d after the flip went to %s (%s)", x.ID, x.Site, x.Addr)
		}
	}
	if before == 0 || after == 0 {
		r.Failf("writes through the name: %d on %s's Service before, %d on %s's after", before, a, after, b)
	}
	first, _ := firstAckAfter(l.hist.Attempts, b, asked)
	r.Figure("follow-s", first.End.Sub(asked).Seconds())
	r.Notef("first write through the name on %s %.2fs after the request, %.2fs after dig saw the flip",
		b, first.End.Sub(asked).Seconds(), first.End.Sub(flipped).Seconds())
	return nil
}
