package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// slowCache is a fakeCache whose takeover blocks until its context ends
// (an old master that never answers).
type slowCache struct{ *fakeCache }

func (c slowCache) Takeover(ctx context.Context, _, _ string, budget time.Duration) (string, error) {
	c.takeovers++
	<-ctx.Done()
	return "REPLTAKEOVER", ctx.Err()
}

// flakyCache refuses its first takeover at once, as Redis does while the
// master does not count its replica online yet.
type flakyCache struct {
	*fakeCache
	refused bool
}

func (c *flakyCache) Takeover(ctx context.Context, source, target string, budget time.Duration) (string, error) {
	if !c.refused {
		c.refused = true
		c.takeovers++
		return "FAILOVER", errFake
	}
	return c.fakeCache.Takeover(ctx, source, target, budget)
}

// TestPromoteCacheEmergency: a takeover within half of maxSyncWait keeps
// sessions; anything else falls back to REPLICAOF NO ONE, and the label
// follows the target either way.
func TestPromoteCacheEmergency(t *testing.T) {
	g := &v1alpha1.MysqlFailoverGroup{}
	cases := []struct {
		name      string
		cache     func() (Cache, *fakeCache)
		method    string
		preserved bool
		err       bool
		traffic   string
		maxTook   time.Duration
	}{
		{"takeover succeeds", func() (Cache, *fakeCache) { c := newFakeCache(); return c, c }, "REPLTAKEOVER", true, false, "b", time.Second},
		{"takeover refused: fall back", func() (Cache, *fakeCache) { c := newFakeCache(); c.takeoverErr = errFake; return c, c },
			methodReplicaOfNoOne, false, false, "b", time.Second},
		{"refused once, then taken over within the budget", func() (Cache, *fakeCache) { c := newFakeCache(); return &flakyCache{fakeCache: c}, c },
			"REPLTAKEOVER", true, false, "b", time.Second},
		{"old master hangs: fall back at half the budget", func() (Cache, *fakeCache) { c := newFakeCache(); return slowCache{c}, c },
			methodReplicaOfNoOne, false, false, "b", 800 * time.Millisecond},
		{"fallback fails too: error, label stays", func() (Cache, *fakeCache) {
			c := newFakeCache()
			c.takeoverErr, c.promoteErr = errFake, errFake
			return c, c
		}, "", false, true, "a", time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache, fc := c.cache()
			start := time.Now()
			res := PromoteCacheEmergency(t.Context(), cache, fc, g, "a", "b", time.Second, start)
			if took := time.Since(start); took > c.maxTook {
				t.Fatalf("took %s, more than %s", took, c.maxTook)
			}
			if res.Method != c.method || res.SessionsPreserved != c.preserved || (res.Err != nil) != c.err || fc.traffic != c.traffic {
				t.Fatalf("result %+v traffic %q", res, fc.traffic)
			}
			if c.err && !errors.Is(res.Err, errFake) {
				t.Fatalf("err %v does not wrap the cause", res.Err)
			}
		})
	}
}
