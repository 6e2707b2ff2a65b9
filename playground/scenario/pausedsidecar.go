package scenario

import (
	"context"
	"fmt"
	"time"
)

func init() {
	register(Scenario{19, "paused-sidecar", "the primary's sidecar alone is frozen and the primary cut off: its mysqld fences itself " +
		"(the lease fence event) before the other site is promoted", pausedSidecar})
}

// pausedSidecar freezes site-a's sidecar container while its mysqld runs
// on, then cuts site-a off from the operator and site-b (clients still
// reach it). Nothing can fence site-a but mysqld's own lease fence event:
// it must stop acknowledging writes within leaseTimeout plus one
// peerCheckInterval of the freeze, and before site-b takes writes.
func pausedSidecar(ctx context.Context, e *Env) Result {
	return play(ctx, e, "paused-sidecar", Plan{}, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		a, b := Sites[0], Sites[1]
		pod, _, err := g.Pod(ctx, a)
		if err != nil {
			return err
		}
		frozen := l.Mark("freeze-sidecar")
		if err := e.C.Freeze(ctx, g.NS, pod, "sidecar"); err != nil {
			return fmt.Errorf("freeze %s's sidecar: %w", a, err)
		}
		defer func() { _ = e.C.Thaw(context.Background(), g.NS, pod, "sidecar") }()
		l.Mark("isolate")
		for _, other := range []string{"operator", b} {
			if err := e.C.Partition(ctx, a, other); err != nil {
				return fmt.Errorf("partition %s %s: %w", a, other, err)
			}
		}
		if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
			return err
		}
		if _, err := l.WaitAck(ctx, b, false, frozen, 30*time.Second); err != nil {
			return err
		}
		l.Mark("thaw-heal")
		if err := e.C.Thaw(ctx, g.NS, pod, "sidecar"); err != nil {
			return fmt.Errorf("thaw %s's sidecar: %w", a, err)
		}
		if err := e.C.HealAll(ctx); err != nil {
			return fmt.Errorf("heal: %w", err)
		}
		mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
		if err != nil {
			return err
		}
		r.finish(ctx, l, *mg.Status.LastFailover.TransactionsLost)
		judgePausedSidecar(g, l, r, frozen)
		return nil
	})
}

// judgePausedSidecar checks site-a's last acknowledged write against the
// lease bound and site-b's first, and reports when site-a was fenced.
func judgePausedSidecar(g *Group, l *Load, r *Result, frozen time.Time) {
	a, b := Sites[0], Sites[1]
	h := &l.hist
	last, ok := lastAckOn(h, a)
	if !ok {
		r.Failf("no write acknowledged by %s", a)
		return
	}
	bound := g.T.LeaseTimeout + g.T.PeerCheckInterval
	if after := last.End.Sub(frozen); after > bound {
		r.Failf("%s acknowledged id %d %.2fs after its sidecar froze, beyond leaseTimeout+peerCheckInterval %s",
			a, last.ID, after.Seconds(), bound)
	}
	if firstB, ok := firstAckOn(h, b, frozen); ok && !firstB.Start.After(last.End) {
		r.Failf("%s took write %d before %s's last acknowledged write %d", b, firstB.ID, a, last.ID)
	}
	fenced := refusedAfter(h.Probes, a, last.End).Sub(frozen)
	r.Figure("lease-event-fence-s", fenced.Seconds())
	r.Notef("last write on %s %.2fs after its sidecar froze; fenced by %.2fs (leaseTimeout %s)",
		a, last.End.Sub(frozen).Seconds(), fenced.Seconds(), g.T.LeaseTimeout)
}
