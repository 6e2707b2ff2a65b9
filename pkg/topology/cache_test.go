package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestJudgeCacheSync: the sync wait against a source offset of 1000
// captured at the drain, with a 30 s budget.
func TestJudgeCacheSync(t *testing.T) {
	t0 := time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)
	base := CacheSync{SourceOffset: 1000, Captured: true, TargetOffset: 400, TargetRead: true,
		Entered: t0, Now: t0.Add(time.Second), MaxSyncWait: 30 * time.Second, Policy: v1alpha1.SyncTimeoutProceed}
	with := func(f func(*CacheSync)) CacheSync { s := base; f(&s); return s }
	cases := []struct {
		name   string
		in     CacheSync
		want   CacheSyncVerdict
		waited time.Duration
	}{
		{"behind within the budget: wait", base, CacheSyncWait, time.Second},
		{"exactly at the captured offset: reached", with(func(s *CacheSync) { s.TargetOffset = 1000 }), CacheSyncReached, time.Second},
		{"past the captured offset: reached", with(func(s *CacheSync) { s.TargetOffset = 1200 }), CacheSyncReached, time.Second},
		{"reached at the last moment beats the timeout", with(func(s *CacheSync) { s.TargetOffset = 1000; s.Now = t0.Add(time.Minute) }), CacheSyncReached, time.Minute},
		{"budget spent, proceed", with(func(s *CacheSync) { s.Now = t0.Add(30 * time.Second) }), CacheSyncProceed, 30 * time.Second},
		{"budget spent, fail", with(func(s *CacheSync) { s.Now = t0.Add(31 * time.Second); s.Policy = v1alpha1.SyncTimeoutFail }), CacheSyncFail, 31 * time.Second},
		{"budget spent, empty policy means proceed", with(func(s *CacheSync) { s.Now = t0.Add(31 * time.Second); s.Policy = "" }), CacheSyncProceed, 31 * time.Second},
		{"zero maxSyncWait means 30s", with(func(s *CacheSync) { s.MaxSyncWait = 0; s.Now = t0.Add(29 * time.Second) }), CacheSyncWait, 29 * time.Second},
		{"source never captured: never reached", with(func(s *CacheSync) { s.Captured = false; s.TargetOffset = 5000 }), CacheSyncWait, time.Second},
		{"target unread: never reached", with(func(s *CacheSync) { s.TargetRead = false; s.TargetOffset = 5000 }), CacheSyncWait, time.Second},
		{"unread target past the budget times out", with(func(s *CacheSync) {
			s.TargetRead = false
			s.Now = t0.Add(40 * time.Second)
			s.Policy = v1alpha1.SyncTimeoutFail
		}), CacheSyncFail, 40 * time.Second},
		{"negative source offset (bad input): never reached", with(func(s *CacheSync) { s.SourceOffset = -1; s.TargetOffset = 0 }), CacheSyncWait, time.Second},
		{"clock behind the entry: waited zero", with(func(s *CacheSync) { s.Now = t0.Add(-time.Second) }), CacheSyncWait, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, waited := JudgeCacheSync(c.in)
			if got != c.want || waited != c.waited {
				t.Fatalf("JudgeCacheSync = %s after %s, want %s after %s", got, waited, c.want, c.waited)
			}
		})
	}
}

func TestCacheMethodFor(t *testing.T) {
	cases := []struct {
		name   string
		synced bool
		want   CacheMethod
	}{
		{"sync reached: takeover", true, CacheTakeover},
		{"sync timed out under proceed: replicaof no one", false, CacheReplicaNoOne},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CacheMethodFor(c.synced); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// TestJudgeCacheTakeover covers the takeover rows of the rollback table
// and a takeover whose answer was lost.
func TestJudgeCacheTakeover(t *testing.T) {
	ok := TakeoverOutcome{TargetMaster: true, RoleRead: true}
	failed := TakeoverOutcome{Err: true, RoleRead: true}
	lostButTook := TakeoverOutcome{Err: true, TargetMaster: true, RoleRead: true}
	unread := TakeoverOutcome{Err: true}
	moved := CacheVerdict{Action: CacheMoveLabels, SessionsPreserved: true}
	fallBack := CacheVerdict{Action: CacheFallBack, Reason: v1alpha1.ReasonDragonflyPromoFailed}
	rollBack := CacheVerdict{Action: CacheRollBack, Reason: v1alpha1.ReasonDragonflyPromoFailed}
	cases := []struct {
		name   string
		o      TakeoverOutcome
		policy v1alpha1.SyncTimeoutPolicy
		want   CacheVerdict
	}{
		{"success, proceed", ok, v1alpha1.SyncTimeoutProceed, moved},
		{"success, fail", ok, v1alpha1.SyncTimeoutFail, moved},
		{"row: takeover fails, proceed -> fall back, sessions not preserved", failed, v1alpha1.SyncTimeoutProceed, fallBack},
		{"row: takeover fails, fail -> roll back", failed, v1alpha1.SyncTimeoutFail, rollBack},
		{"answer lost but target is master: success, no rollback", lostButTook, v1alpha1.SyncTimeoutFail, moved},
		{"answer lost, role unread, proceed: fall back", unread, v1alpha1.SyncTimeoutProceed, fallBack},
		{"answer lost, role unread, fail: roll back", unread, v1alpha1.SyncTimeoutFail, rollBack},
		{"call said OK but target still replica, fail: roll back", TakeoverOutcome{RoleRead: true}, v1alpha1.SyncTimeoutFail, rollBack},
		{"empty policy means proceed", failed, "", fallBack},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := JudgeCacheTakeover(c.o, c.policy); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestEmergencyCache: half of maxSyncWait for the takeover, then
// REPLICAOF NO ONE; never a rollback.
func TestEmergencyCache(t *testing.T) {
	t0 := time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)
	plans := []struct {
		name string
		max  time.Duration
		want time.Duration
	}{
		{"30s budget: 15s takeover", 30 * time.Second, 15 * time.Second},
		{"unset: default 30s halves to 15s", 0, 15 * time.Second},
		{"1s budget: 500ms", time.Second, 500 * time.Millisecond},
	}
	for _, c := range plans {
		t.Run(c.name, func(t *testing.T) {
			p := EmergencyCachePlan(c.max, t0)
			if p.TakeoverBudget != c.want || !p.Deadline.Equal(t0.Add(c.want)) {
				t.Fatalf("plan %+v, want budget %s", p, c.want)
			}
		})
	}
	verdicts := []struct {
		name string
		o    TakeoverOutcome
		want CacheAction
		kept bool
	}{
		{"takeover done: sessions kept", TakeoverOutcome{TargetMaster: true, RoleRead: true}, CacheMoveLabels, true},
		{"takeover failed (old master down): fall back", TakeoverOutcome{Err: true, RoleRead: true}, CacheFallBack, false},
		{"nothing readable: fall back", TakeoverOutcome{Err: true}, CacheFallBack, false},
	}
	for _, c := range verdicts {
		t.Run(c.name, func(t *testing.T) {
			v := JudgeEmergencyTakeover(c.o)
			if v.Action != c.want || v.SessionsPreserved != c.kept {
				t.Fatalf("got %+v, want %s kept=%v", v, c.want, c.kept)
			}
		})
	}
}
