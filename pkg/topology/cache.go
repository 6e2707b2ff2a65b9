package topology

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The cache (Dragonfly, or Redis standing in) follows the MySQL primary.
// A planned failover moves it in two phases between WaitingForLag and
// Promoting; these functions decide each step, pkg/failover executes:
//
//   - WaitingForDragonflySync: the source's offset is captured once at the
//     drain; the target is polled until its offset reaches it (the sync is
//     reached) or maxSyncWait since the phase began runs out (the sync timed
//     out, and onSyncTimeout says proceed or fail). JudgeCacheSync.
//   - PromotingDragonfly: a target that reached the sync is promoted by a
//     takeover (REPLTAKEOVER, or FAILOVER on Redis), which itself waits for
//     the last writes; one that did not, under proceed, by REPLICAOF NO ONE,
//     since a second maxSyncWait would only stretch the window.
//     CacheMethodFor. The takeover's outcome is judged by JudgeCacheTakeover.
//
// The four rows of the rollback table (seed 002) are:
//
//	sync timeout, proceed     -> promote anyway; sessionsPreserved=false
//	sync timeout, fail        -> Failed DragonflySyncTimeout; MySQL rolled back
//	takeover fails, proceed   -> REPLICAOF NO ONE; sessionsPreserved=false,
//	                             reason DragonflyPromotionFailed; MySQL goes on
//	takeover fails, fail      -> Failed DragonflyPromotionFailed; rolled back
//
// A takeover whose answer was lost (a timeout, a dropped connection) is
// judged on the target's role read afterwards: a target that is master
// took over, and counts as a success, so a rollback never hands MySQL back
// while the cache already moved.
//
// An emergency failover never waits on the cache: EmergencyCachePlan gives
// the takeover half of maxSyncWait, then REPLICAOF NO ONE, run beside the
// MySQL promotion rather than before it.

// CacheSync is what one pass of WaitingForDragonflySync knows.
type CacheSync struct {
	// SourceOffset is the source's master_repl_offset captured at the
	// drain; Captured is false until it was read.
	SourceOffset int64
	Captured     bool
	// TargetOffset is the target's slave_repl_offset now; TargetRead is
	// false when the target could not be read this pass.
	TargetOffset int64
	TargetRead   bool
	// Entered is when the phase began; Now is the pass's time.
	Entered, Now time.Time
	// MaxSyncWait is spec.dragonfly.plannedFailover.maxSyncWait (30 s
	// when zero); Policy is its onSyncTimeout (proceed when empty).
	MaxSyncWait time.Duration
	Policy      v1alpha1.SyncTimeoutPolicy
}

// CacheSyncVerdict is JudgeCacheSync's answer.
type CacheSyncVerdict string

// CacheSync verdicts.
const (
	// CacheSyncWait: poll again, the budget is not spent.
	CacheSyncWait CacheSyncVerdict = "Wait"
	// CacheSyncReached: the target holds the captured offset.
	CacheSyncReached CacheSyncVerdict = "Reached"
	// CacheSyncProceed: the budget ran out under proceed; promote anyway.
	CacheSyncProceed CacheSyncVerdict = "TimeoutProceed"
	// CacheSyncFail: the budget ran out under fail; roll back.
	CacheSyncFail CacheSyncVerdict = "TimeoutFail"
)

// DefaultMaxSyncWait is maxSyncWait when the spec leaves it zero.
const DefaultMaxSyncWait = 30 * time.Second

// JudgeCacheSync decides one pass of the sync wait. A negative offset
// (bad input) never counts as reached. Waited is how long the phase has
// lasted, for status.plannedFailover.dragonfly.syncWaitSeconds.
func JudgeCacheSync(s CacheSync) (v CacheSyncVerdict, waited time.Duration) {
	waited = max(s.Now.Sub(s.Entered), 0)
	if s.Captured && s.TargetRead && s.SourceOffset >= 0 && s.TargetOffset >= s.SourceOffset {
		return CacheSyncReached, waited
	}
	if waited < maxSyncWait(s.MaxSyncWait) {
		return CacheSyncWait, waited
	}
	if s.Policy == v1alpha1.SyncTimeoutFail {
		return CacheSyncFail, waited
	}
	return CacheSyncProceed, waited
}

func maxSyncWait(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultMaxSyncWait
	}
	return d
}

// CacheMethod is how the target cache is made master.
type CacheMethod string

// Cache promotion methods.
const (
	CacheTakeover     CacheMethod = "Takeover"
	CacheReplicaNoOne CacheMethod = "ReplicaOfNoOne"
)

// CacheMethodFor is how PromotingDragonfly promotes the target: a takeover
// when the sync was reached, REPLICAOF NO ONE when it timed out (proceed).
func CacheMethodFor(synced bool) CacheMethod {
	if synced {
		return CacheTakeover
	}
	return CacheReplicaNoOne
}

// TakeoverOutcome is what a takeover attempt came to.
type TakeoverOutcome struct {
	// Err is true when the takeover call returned an error.
	Err bool
	// TargetMaster is the target's role read after the call: true when it
	// reports master. RoleRead is false when that read failed too.
	TargetMaster, RoleRead bool
}

// CacheAction is what follows a takeover attempt.
type CacheAction string

// Cache actions.
const (
	// CacheMoveLabels: the target is master; move the traffic label.
	CacheMoveLabels CacheAction = "MoveLabels"
	// CacheFallBack: promote the target by REPLICAOF NO ONE, then move labels.
	CacheFallBack CacheAction = "FallBack"
	// CacheRollBack: restore the source's label and roll the request back.
	CacheRollBack CacheAction = "RollBack"
)

// CacheVerdict is JudgeCacheTakeover's answer.
type CacheVerdict struct {
	Action CacheAction
	// SessionsPreserved is false when sessions may have been lost.
	SessionsPreserved bool
	// Reason is v1alpha1.ReasonDragonflyPromoFailed when the takeover
	// failed, "" otherwise.
	Reason string
}

// JudgeCacheTakeover decides after a takeover attempt. A target read as
// master took over whatever the call said. Otherwise the takeover failed:
// proceed falls back to REPLICAOF NO ONE (sessions may be lost), fail
// rolls back. An unreadable target under proceed also falls back: the
// fallback's own error is what stops the cache, never MySQL.
func JudgeCacheTakeover(o TakeoverOutcome, policy v1alpha1.SyncTimeoutPolicy) CacheVerdict {
	if o.RoleRead && o.TargetMaster {
		return CacheVerdict{Action: CacheMoveLabels, SessionsPreserved: true}
	}
	if policy == v1alpha1.SyncTimeoutFail {
		return CacheVerdict{Action: CacheRollBack, Reason: v1alpha1.ReasonDragonflyPromoFailed}
	}
	return CacheVerdict{Action: CacheFallBack, Reason: v1alpha1.ReasonDragonflyPromoFailed}
}

// EmergencyCache is the emergency path's plan for the cache.
type EmergencyCache struct {
	// TakeoverBudget bounds the takeover attempt: half of maxSyncWait.
	TakeoverBudget time.Duration
	// Deadline is when the attempt must have ended: start plus the budget.
	Deadline time.Time
}

// EmergencyCachePlan plans the cache's promotion in an emergency failover
// that starts at start: a takeover bounded by half of maxSyncWait, then
// REPLICAOF NO ONE. The caller runs it beside the MySQL promotion and
// never waits on it.
func EmergencyCachePlan(maxSync time.Duration, start time.Time) EmergencyCache {
	b := maxSyncWait(maxSync) / 2
	return EmergencyCache{TakeoverBudget: b, Deadline: start.Add(b)}
}

// JudgeEmergencyTakeover decides after the emergency takeover: a target
// read as master keeps sessions; anything else falls back to REPLICAOF NO
// ONE, which may lose sessions. The emergency path never rolls back.
func JudgeEmergencyTakeover(o TakeoverOutcome) CacheVerdict {
	return JudgeCacheTakeover(o, v1alpha1.SyncTimeoutProceed)
}
