package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{1, "primary-killed", "the primary's mysqld is killed: failover to the other site", primaryKilled})
	register(Scenario{3, "planned-under-load", "planned failover under load: nothing lost", plannedUnderLoad})
	register(Scenario{5, "isolated-primary", "the primary loses the operator and its peer: it fences itself, then the peer is promoted", isolatedPrimary})
}

func primaryKilled(ctx context.Context, e *Env) Result {
	return play(ctx, e, "primary-killed", Plan{}, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		rto, err := killPrimary(ctx, g, l, r)
		if err != nil {
			return err
		}
		r.Figure("rto-s", rto.Seconds())
		return nil
	})
}

// killPrimary kills site-a's mysqld, waits for the failover, the first
// acknowledged write through the writers on site-b and the loss accounting,
// then finishes the history. It returns the RTO: the kill to the first write
// acknowledged by the new primary.
func killPrimary(ctx context.Context, g *Group, l *Load, r *Result) (time.Duration, error) {
	pod, _, err := g.Pod(ctx, Sites[0])
	if err != nil {
		return 0, err
	}
	kill := l.Mark("kill")
	if err := g.e.C.Kill(ctx, g.NS, pod, "mysqld"); err != nil {
		return 0, fmt.Errorf("kill mysqld: %w", err)
	}
	if err := g.WaitActive(ctx, Sites[1], 2, 2*time.Minute); err != nil {
		return 0, err
	}
	if _, err := l.WaitAck(ctx, Sites[1], false, kill, 30*time.Second); err != nil {
		return 0, err
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return 0, err
	}
	lf := mg.Status.LastFailover
	if lf.Kind != v1alpha1.KindEmergency || lf.From != Sites[0] || lf.To != Sites[1] {
		r.Failf("lastFailover %s %s -> %s, want emergency %s -> %s", lf.Kind, lf.From, lf.To, Sites[0], Sites[1])
	}
	rep := r.finish(ctx, l, *lf.TransactionsLost)
	first, ok := firstAckAfter(l.hist.Attempts, Sites[1], kill)
	if !ok {
		return 0, fmt.Errorf("no write acknowledged by %s after the kill", Sites[1])
	}
	for _, a := range writersAfter(l.hist.Attempts, first.End) {
		if a.OK && a.Site != Sites[1] {
			r.Failf("write %d acknowledged by %s after %s took over", a.ID, a.Site, Sites[1])
			break
		}
	}
	rto := first.End.Sub(kill)
	r.Notef("transactionsLost %d; first write on %s %.2fs after the kill; longest window %s",
		*lf.TransactionsLost, Sites[1], rto.Seconds(), rep.MaxWindow.Round(time.Millisecond))
	return rto, nil
}

func lossReported(mg *v1alpha1.MysqlFailoverGroup) error {
	if lf := mg.Status.LastFailover; lf != nil && lf.TransactionsLost != nil && mg.Status.TopologyGeneration >= 2 {
		return nil
	}
	return fmt.Errorf("lastFailover %+v", mg.Status.LastFailover)
}

// firstAckAfter returns the first writer's write acknowledged by site that started after t.
func firstAckAfter(as []load.Attempt, site string, t time.Time) (load.Attempt, bool) {
	var best load.Attempt
	found := false
	for _, a := range as {
		if a.OK && a.Site == site && a.Start.After(t) && (!found || a.End.Before(best.End)) {
			best, found = a, true
		}
	}
	return best, found
}

// lastAckOn returns the last acknowledged write (writers' or probes') of site.
func lastAckOn(h *load.History, site string) (load.Attempt, bool) {
	var best load.Attempt
	found := false
	for _, a := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if a.OK && a.Site == site && (!found || a.End.After(best.End)) {
			best, found = a, true
		}
	}
	return best, found
}
