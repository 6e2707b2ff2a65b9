package scenario

import (
	"context"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/load"
)

// The durability scenarios: isolated-primary and lagging-replica-loss again,
// on a group with semi-sync replication required (docs/durability.md).
// What the primary acknowledged, a replica had: the cut-off or killed
// primary may still hold transactions the new one lacks, and the group
// reports them in transactionsLost, but each of them is a write that its
// client saw fail.
func init() {
	register(Scenario{20, "isolated-primary-required", "isolated-primary with semi-sync required: the cut-off primary's commits wait for its peer; no acknowledged write lost", isolatedPrimaryRequired})
	register(Scenario{21, "lagging-replica-loss-required", "lagging-replica-loss with semi-sync required: the commits after the feed cut wait; no acknowledged write lost", laggingReplicaLossRequired})
}

// semiSyncRequired is the mode of the durability scenarios.
var semiSyncRequired = string(v1alpha1.DurabilityRequired)

func isolatedPrimaryRequired(ctx context.Context, e *Env) Result {
	return play(ctx, e, "isolated-primary-required", Plan{SemiSync: semiSyncRequired}, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		fence, err := isolate(ctx, g, l, r)
		if err != nil {
			return err
		}
		r.Figure("fence-s", fence.Seconds())
		return nil
	})
}

func laggingReplicaLossRequired(ctx context.Context, e *Env) Result {
	return play(ctx, e, "lagging-replica-loss-required", Plan{SemiSync: semiSyncRequired}, laggingReplicaLossBody)
}

// judgeLoss applies the promises to a stopped load after a failover that
// reported transactionsLost reported, site being the old primary and cut
// the moment it lost its replica. Asynchronously, acknowledged writes may
// be lost up to what the group reported. With semi-sync semiSyncRequired, none
// may be, and the report must agree with the history: every transaction it
// counts is a write on site that its client saw fail after the cut (in
// flight at the cut or begun later; a failed write may have committed).
// The acknowledged writes lost are the figure "lost-acked".
func (r *Result) judgeLoss(g *Group, h *load.History, reported int64, site string, cut time.Time) *load.Report {
	if g.SemiSync != semiSyncRequired {
		rep := r.judge(h, reported)
		r.Figure("lost-acked", float64(len(rep.Lost)))
		return rep
	}
	rep := r.judge(h, -1)
	r.Figure("lost-acked", float64(len(rep.Lost)))
	unsure := failedAfter(h, site, cut)
	if reported > int64(unsure) {
		r.Broken++
		r.Failf("transactionsLost %d, but only %d writes on %s failed after the cut: the group counts transactions "+
			"that no client saw fail, or the history misses them", reported, unsure, site)
	}
	r.Notef("semi-sync required: %d acknowledged writes lost; transactionsLost %d, within the %d writes on %s that failed after the cut",
		len(rep.Lost), reported, unsure, site)
	return rep
}

// promotedTakesWrites waits for a writer's write acknowledged by the
// promoted site after cut. With semi-sync required it does not: the old
// primary is the new one's only replica, cut off still, and the new
// primary's commits wait for it (writesAfterHeal looks afterwards).
func (g *Group) promotedTakesWrites(ctx context.Context, l *Load, site string, cut time.Time) error {
	if g.SemiSync == semiSyncRequired {
		return nil
	}
	_, err := l.WaitAck(ctx, site, false, cut, 30*time.Second)
	return err
}

// writesAfterHeal, with semi-sync semiSyncRequired, notes when the promoted site
// first acknowledged a write after cut, if it did within 30 s of the heal:
// its commits wait until a replica acknowledges them. The figure
// "promoted-first-ack-s" is that moment after the cut.
func (g *Group) writesAfterHeal(ctx context.Context, l *Load, r *Result, site string, cut time.Time) {
	if g.SemiSync != semiSyncRequired {
		return
	}
	a, err := l.WaitAck(ctx, site, false, cut, 30*time.Second)
	if err != nil {
		r.Notef("semi-sync required: %s acknowledged no write since the cut, 30 s after the heal: its commits wait for a replica (%v)", site, err)
		return
	}
	r.Figure("promoted-first-ack-s", a.End.Sub(cut).Seconds())
	r.Notef("semi-sync required: %s acknowledged its first write %.2fs after the cut", site, a.End.Sub(cut).Seconds())
}

// failedAfter counts the failed writes (writers' and probes') on site that
// ended after t: each may have committed there without an acknowledgement.
func failedAfter(h *load.History, site string, t time.Time) int {
	n := 0
	for _, a := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if !a.OK && a.Site == site && a.End.After(t) {
			n++
		}
	}
	return n
}
