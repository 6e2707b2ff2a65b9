package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// emergencyTakeover tries the takeover until it works or plan's deadline
// passes: a fast refusal (a replica its master does not count as online
// yet) is tried again, every emergencyRetry, within the budget.
func emergencyTakeover(ctx context.Context, cache Cache, source, target string,
	plan topology.EmergencyCache) (string, topology.CacheVerdict, error) {
	tctx, cancel := context.WithDeadline(ctx, plan.Deadline)
	defer cancel()
	for {
		left := time.Until(plan.Deadline)
		method, terr := cache.Takeover(tctx, source, target, max(left, time.Millisecond))
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		r, rerr := cache.CacheRead(rctx, target)
		rcancel()
		v := topology.JudgeEmergencyTakeover(topology.TakeoverOutcome{Err: terr != nil,
			TargetMaster: rerr == nil && r.Master, RoleRead: rerr == nil})
		if v.Action != topology.CacheFallBack {
			return method, v, terr
		}
		select {
		case <-tctx.Done():
			return method, v, terr
		case <-time.After(emergencyRetry):
		}
	}
}

// emergencyRetry paces the emergency takeover's attempts.
const emergencyRetry = 100 * time.Millisecond

// CacheEmergencyResult is what PromoteCacheEmergency did.
type CacheEmergencyResult struct {
	// Method is how the target became master ("" when it did not).
	Method string
	// SessionsPreserved is true only after a takeover.
	SessionsPreserved bool
	// Err is why the target's cache is not master, nil when it is.
	Err error
}

// PromoteCacheEmergency moves the cache to target in an emergency
// failover that began at start: a takeover from source bounded by half of
// maxSyncWait (topology.EmergencyCachePlan), else REPLICAOF NO ONE, then
// the traffic label (router may be nil). It never touches MySQL, and the
// caller runs it beside the MySQL promotion, in its own goroutine, never
// before it: nothing of the MySQL sequence waits for it.
func PromoteCacheEmergency(ctx context.Context, cache Cache, router CacheRouter, g *v1alpha1.MysqlFailoverGroup,
	source, target string, maxSyncWait time.Duration, start time.Time) CacheEmergencyResult {
	plan := topology.EmergencyCachePlan(maxSyncWait, start)
	method, v, terr := emergencyTakeover(ctx, cache, source, target, plan)
	res := CacheEmergencyResult{Method: method, SessionsPreserved: v.SessionsPreserved}
	if v.Action == topology.CacheFallBack {
		res = CacheEmergencyResult{Method: methodReplicaOfNoOne}
		if err := cache.PromoteAlone(ctx, target); err != nil {
			return CacheEmergencyResult{Err: fmt.Errorf("emergency: takeover (%v) and REPLICAOF NO ONE on %s's cache: %w",
				terr, target, err)}
		}
	}
	if router != nil {
		if err := router.SetCacheTraffic(ctx, g, target); err != nil {
			res.Err = fmt.Errorf("%w: emergency: cache traffic label to %s: %w", ErrRoute, target, err)
		}
	}
	return res
}
