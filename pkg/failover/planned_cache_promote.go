package failover

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// promotingCache strips the traffic label from the source's cache,
// promotes the target's (topology.CacheMethodFor, JudgeCacheTakeover),
// records how, moves the label to it and kills the old master's normal
// clients (best effort), then names the MySQL target active
// (lagCaughtUp). Each part is safe to repeat: a restarted operator that
// finds the method recorded and the target master goes on from the label.
func (m *Planned) promotingCache(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	if cacheRollingBack(b) {
		return m.cacheRollback(ctx, p, b, b.Reason, b.Message)
	}
	if m.env.Cache == nil {
		return m.cacheSkipped(ctx, p, b)
	}
	m.cacheTraffic(ctx, p, "")
	if r, err := m.cacheRead(ctx, p, b.Target); b.Dragonfly.PromotionMethod == "" || err != nil || !r.Master {
		if out, done, err := m.promoteCache(ctx, p, b); !done {
			return out, err
		}
	}
	m.cacheTraffic(ctx, p, b.Target)
	cctx, cancel := m.call(ctx, p)
	_ = m.env.Cache.KillClients(cctx, b.SourcePrimary) // best effort; Dragonfly's old master may be gone
	cancel()
	result, event, kind := DragonflyResultSuccess, v1alpha1.EventDragonflyPromotionComplete, EventNormal
	if b.Dragonfly.SessionsPreserved == nil || !*b.Dragonfly.SessionsPreserved {
		result = DragonflyResultFailed
	}
	m.cacheCount(p.Group, b.Target, result)
	m.env.Notifier.Event(p.Group, kind, event, fmt.Sprintf("%s's cache is master by %s (sessions preserved: %v)",
		b.Target, b.Dragonfly.PromotionMethod, b.Dragonfly.SessionsPreserved != nil && *b.Dragonfly.SessionsPreserved))
	return m.lagCaughtUp(ctx, p, b)
}

// promoteCache makes the target's cache master and persists how; done is
// false when the pass must end with out and err (a retry, or a rollback).
func (m *Planned) promoteCache(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, bool, error) {
	spec := p.Group.Spec.Dragonfly.PlannedFailover
	synced := b.Dragonfly.SessionsPreserved == nil
	if topology.CacheMethodFor(synced) == topology.CacheTakeover {
		budget := spec.MaxSyncWait.Duration
		if budget <= 0 {
			budget = topology.DefaultMaxSyncWait
		}
		tctx, cancel := context.WithTimeout(ctx, budget+p.Settings.CallTimeout)
		method, terr := m.env.Cache.Takeover(tctx, b.SourcePrimary, b.Target, budget)
		cancel()
		r, rerr := m.cacheRead(ctx, p, b.Target)
		v := topology.JudgeCacheTakeover(topology.TakeoverOutcome{Err: terr != nil,
			TargetMaster: rerr == nil && r.Master, RoleRead: rerr == nil}, spec.OnSyncTimeout)
		switch v.Action {
		case topology.CacheMoveLabels:
			yes := true
			b.Dragonfly.PromotionMethod, b.Dragonfly.SessionsPreserved = method, &yes
			return m.recordCache(ctx, p)
		case topology.CacheRollBack:
			out, err := m.cacheRollback(ctx, p, b, v.Reason,
				fmt.Sprintf("the takeover of %s's cache failed (%v); onSyncTimeout=fail", b.Target, terr))
			return out, false, err
		}
		// The fallback's intent is persisted first: a restart must not
		// take a REPLICAOF NO ONE that took effect for a takeover.
		no := false
		b.Reason, b.Dragonfly.SessionsPreserved = v.Reason, &no
		if err := m.persist(ctx, p); err != nil {
			return waiting(retryPause, "recording the fallback"), false, err
		}
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventDragonflyPromotionFailed,
			fmt.Sprintf("the takeover of %s's cache failed (%v); onSyncTimeout=proceed: REPLICAOF NO ONE, "+
				"sessions may be lost", b.Target, terr))
	}
	cctx, cancel := m.call(ctx, p)
	err := m.env.Cache.PromoteAlone(cctx, b.Target)
	cancel()
	if err != nil {
		// The cache never holds MySQL back: its label returns to the
		// source's cache, which still serves, and MySQL goes on.
		b.Reason = v1alpha1.ReasonDragonflyPromoFailed
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventDragonflyPromotionFailed,
			fmt.Sprintf("%s's cache could not be promoted (%v); the cache stays with %s", b.Target, err, b.SourcePrimary))
		m.cacheCount(p.Group, b.Target, DragonflyResultFailed)
		m.cacheTraffic(ctx, p, b.SourcePrimary)
		out, lerr := m.lagCaughtUp(ctx, p, b)
		return out, false, lerr
	}
	b.Dragonfly.PromotionMethod = methodReplicaOfNoOne
	return m.recordCache(ctx, p)
}

// recordCache persists the promotion before the label moves.
func (m *Planned) recordCache(ctx context.Context, p Pass) (PlannedOutcome, bool, error) {
	if err := m.persist(ctx, p); err != nil {
		return waiting(retryPause, "recording the cache's promotion"), false, err
	}
	return PlannedOutcome{}, true, nil
}
