package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// The cache's two phases sit between WaitingForLag and Promoting, while
// the MySQL source is fenced and still named active. They run when the
// request started with spec.dragonfly.enabled (status.plannedFailover.
// dragonfly.enabled) and this operator has a Cache to act through; an
// enabled request without one skips them and counts skipped. Decisions
// are topology's (cache.go); each pass persists before it returns.

// lagDone follows WaitingForLag: into the cache's phases when they run,
// else straight on to naming the target active (lagCaughtUp).
func (m *Planned) lagDone(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	if !cacheEnabled(b) {
		return m.lagCaughtUp(ctx, p, b)
	}
	if m.env.Cache == nil {
		return m.cacheSkipped(ctx, p, b)
	}
	return m.advance(ctx, p, b, v1alpha1.PhaseWaitingForDragonflySync,
		fmt.Sprintf("MySQL caught up; waiting for %s's cache to reach %s's offset", b.Target, b.SourcePrimary))
}

func cacheEnabled(b *v1alpha1.PlannedFailoverStatus) bool {
	return b.Dragonfly != nil && b.Dragonfly.Enabled
}

// cacheSkipped moves on without the cache and counts it skipped.
func (m *Planned) cacheSkipped(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	m.cacheCount(p.Group, b.Target, DragonflyResultSkipped)
	return m.lagCaughtUp(ctx, p, b)
}

func (m *Planned) cacheCount(g *v1alpha1.MysqlFailoverGroup, target, result string) {
	if n, ok := m.env.Notifier.(CacheNotifier); ok {
		n.DragonflyPromoted(g, metricSite(g, target), result)
	}
}

// cacheRollingBack reports whether b is rolling back for the cache: the
// reason was persisted before the rollback began, so that a restart
// resumes the rollback instead of trying again. A proceed path records
// the same reason with sessionsPreserved=false, in the same write, and
// is no rollback.
func cacheRollingBack(b *v1alpha1.PlannedFailoverStatus) bool {
	cacheReason := b.Reason == v1alpha1.ReasonDragonflySyncTimeout || b.Reason == v1alpha1.ReasonDragonflyPromoFailed
	return cacheReason && (b.Dragonfly == nil || b.Dragonfly.SessionsPreserved == nil)
}

// waitingForCacheSync captures the source cache's offset once, then polls
// the target's until topology.JudgeCacheSync says reached or timed out.
func (m *Planned) waitingForCacheSync(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus) (PlannedOutcome, error) {
	if cacheRollingBack(b) {
		return m.cacheRollback(ctx, p, b, b.Reason, b.Message)
	}
	if m.env.Cache == nil {
		return m.cacheSkipped(ctx, p, b)
	}
	spec := p.Group.Spec.Dragonfly.PlannedFailover
	now := m.env.Clock.Now()
	in := topology.CacheSync{Entered: now.Add(-m.inPhase(b)), Now: now,
		MaxSyncWait: spec.MaxSyncWait.Duration, Policy: spec.OnSyncTimeout}
	if b.Dragonfly.SourceOffset == nil {
		if r, err := m.cacheRead(ctx, p, b.SourcePrimary); err == nil && r.Master {
			off := r.MasterOffset
			b.Dragonfly.SourceOffset = &off
			if err := m.persist(ctx, p); err != nil {
				return waiting(retryPause, "recording the source cache's offset"), err
			}
		}
	}
	if b.Dragonfly.SourceOffset != nil {
		in.SourceOffset, in.Captured = *b.Dragonfly.SourceOffset, true
		if r, err := m.cacheRead(ctx, p, b.Target); err == nil && !r.Master {
			in.TargetOffset, in.TargetRead = r.ReplicaOffset, true
		}
	}
	verdict, waited := topology.JudgeCacheSync(in)
	b.Dragonfly.SyncWaitSeconds = int64(waited / time.Second)
	switch verdict {
	case topology.CacheSyncReached:
		return m.enterCachePromotion(ctx, p, b, fmt.Sprintf("%s's cache reached offset %d", b.Target, in.SourceOffset))
	case topology.CacheSyncProceed:
		no := false
		b.Dragonfly.SessionsPreserved = &no
		msg := fmt.Sprintf("%s's cache did not reach %s's offset within maxSyncWait; onSyncTimeout=proceed: "+
			"promoting it without a takeover, sessions may be lost", b.Target, b.SourcePrimary)
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventDragonflySyncTimeout, msg)
		return m.enterCachePromotion(ctx, p, b, msg)
	case topology.CacheSyncFail:
		msg := fmt.Sprintf("%s's cache did not reach %s's offset within maxSyncWait; onSyncTimeout=fail",
			b.Target, b.SourcePrimary)
		return m.cacheRollback(ctx, p, b, v1alpha1.ReasonDragonflySyncTimeout, msg)
	}
	return waiting(cacheSyncPoll, fmt.Sprintf("%s's cache at %d, waiting for %d (captured=%v)",
		b.Target, in.TargetOffset, in.SourceOffset, in.Captured)), nil
}

// enterCachePromotion enters PromotingDragonfly.
func (m *Planned) enterCachePromotion(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, msg string) (PlannedOutcome, error) {
	out, err := m.advance(ctx, p, b, v1alpha1.PhasePromotingDragonfly, msg)
	if err == nil {
		m.env.Notifier.Event(p.Group, EventNormal, v1alpha1.EventDragonflyPromotionStarted,
			fmt.Sprintf("promoting %s's cache in place of %s's: %s", b.Target, b.SourcePrimary, msg))
	}
	return out, err
}

// cacheRollback rolls the request back for the cache: the reason is
// persisted first (one Event and one count), the traffic label goes back
// to the source's cache, then the MySQL rollback unfences the source.
func (m *Planned) cacheRollback(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, reason, msg string) (PlannedOutcome, error) {
	if b.Reason != reason {
		b.Reason, b.Message = reason, msg
		if err := m.persist(ctx, p); err != nil {
			return waiting(retryPause, "recording the cache's failure"), err
		}
		event := v1alpha1.EventDragonflyPromotionFailed
		if reason == v1alpha1.ReasonDragonflySyncTimeout {
			event = v1alpha1.EventDragonflySyncTimeout
		}
		m.env.Notifier.Event(p.Group, EventWarning, event, msg+"; rolling back")
		m.cacheCount(p.Group, b.Target, DragonflyResultFailed)
	}
	m.cacheTraffic(ctx, p, b.SourcePrimary)
	result := PlannedResultFailedOther
	if reason == v1alpha1.ReasonDragonflySyncTimeout {
		result = PlannedResultFailedTimeout
	}
	return m.rollback(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: reason, msg: b.Message,
		result: result, event: v1alpha1.EventPlannedFailoverFailed})
}

func (m *Planned) cacheRead(ctx context.Context, p Pass, site string) (CacheRead, error) {
	cctx, cancel := m.call(ctx, p)
	defer cancel()
	r, err := m.env.Cache.CacheRead(cctx, site)
	if err != nil {
		return r, fmt.Errorf("planned failover: read %s's cache: %w", site, err)
	}
	return r, nil
}

// cacheTraffic moves the cache's traffic label to site ("" strips it).
func (m *Planned) cacheTraffic(ctx context.Context, p Pass, site string) {
	r := m.env.CacheRouter
	if r == nil {
		return
	}
	cctx, cancel := m.call(ctx, p)
	defer cancel()
	if err := r.SetCacheTraffic(cctx, p.Group, site); err != nil {
		// Best effort: the cache never holds MySQL back, whose source is
		// fenced now. The follow loop moves the label on later passes.
		m.env.Notifier.Event(p.Group, EventWarning, v1alpha1.EventDragonflyTrafficNotMoved,
			fmt.Sprintf("the cache's traffic label could not be moved to %q (%v); MySQL goes on, the label follows later", site, err))
	}
}
