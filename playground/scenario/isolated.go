package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

func isolatedPrimary(ctx context.Context, e *Env) Result {
	return play(ctx, e, "isolated-primary", Plan{}, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		fence, err := isolate(ctx, g, l, r)
		if err != nil {
			return err
		}
		r.Figure("fence-s", fence.Seconds())
		return nil
	})
}

// isolate cuts site-a off from the operator and from site-b (clients still
// reach it), waits for site-b's promotion, heals, waits for the loss
// accounting and finishes the history. Site-a must stop acknowledging writes
// within leaseTimeout plus one peerCheckInterval of the cut, and before
// site-b takes writes. It returns the fence latency: the cut to the end of
// the first refused probe on site-a after its last acknowledged write.
func isolate(ctx context.Context, g *Group, l *Load, r *Result) (time.Duration, error) {
	a, b := Sites[0], Sites[1]
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return 0, fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return 0, err
	}
	if err := g.promotedTakesWrites(ctx, l, b, cut); err != nil {
		return 0, err
	}
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return 0, fmt.Errorf("heal: %w", err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return 0, err
	}
	g.writesAfterHeal(ctx, l, r, b, cut)
	lost := *mg.Status.LastFailover.TransactionsLost
	h := r.stop(ctx, l)
	r.judgeLoss(g, h, lost, a, cut)
	last, ok := lastAckOn(h, a)
	if !ok {
		return 0, fmt.Errorf("no write acknowledged by %s", a)
	}
	bound := g.T.LeaseTimeout + g.T.PeerCheckInterval
	if after := last.End.Sub(cut); after > bound {
		r.Failf("%s acknowledged id %d %.2fs after the cut, beyond leaseTimeout+peerCheckInterval %s",
			a, last.ID, after.Seconds(), bound)
	}
	if firstB, ok := firstAckOn(h, b, cut); ok && !firstB.Start.After(last.End) {
		r.Failf("%s took write %d before %s's last acknowledged write %d", b, firstB.ID, a, last.ID)
	}
	fence := refusedAfter(h.Probes, a, last.End).Sub(cut)
	r.Notef("transactionsLost %d; last write on %s %.2fs after the cut; fenced by %.2fs",
		lost, a, last.End.Sub(cut).Seconds(), fence.Seconds())
	return fence, nil
}

// firstAckOn is the first acknowledged write (writers' or probes') of site started after t.
func firstAckOn(h *load.History, site string, t time.Time) (load.Attempt, bool) {
	return firstAckAfter(append(append([]load.Attempt(nil), h.Attempts...), h.Probes...), site, t)
}

// refusedAfter is the end of the first failed probe of site that started
// after t, or t itself when there is none.
func refusedAfter(probes []load.Attempt, site string, t time.Time) time.Time {
	for _, p := range probes { // in start order
		if p.Site == site && !p.OK && p.Start.After(t) {
			return p.End
		}
	}
	return t
}
