//go:build db

package grouploop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/dragonfly"
)

// trafficRecorder is a CacheRouter that remembers the labelled site.
type trafficRecorder struct {
	mu   sync.Mutex
	site string
}

func (r *trafficRecorder) SetCacheTraffic(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, site string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.site = site
	return nil
}

// cacheBed is two real Redis 7 servers as the caches of sites a and b.
func cacheBed(t *testing.T) (*testbed.RedisCluster, *cacheConns, *v1alpha1.MysqlFailoverGroup) {
	rc := testbed.StartRedis(t, 2)
	idx := map[string]int{"a": 0, "b": 1}
	c := newCacheConns("ns", "shop", func(_, _, site string) dragonfly.Endpoint {
		i, ok := idx[site]
		if !ok {
			return dragonfly.Endpoint{Host: testbed.Host, Port: 1} // nothing listens
		}
		return dragonfly.Endpoint{Host: testbed.Host, Port: rc.Port(i)}
	})
	t.Cleanup(c.Close)
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Spec.Sites = []v1alpha1.Site{{Name: "a"}, {Name: "b"}}
	g.Spec.Dragonfly = v1alpha1.DragonflySpec{Enabled: true, PlannedFailover: v1alpha1.DragonflyPlannedFailoverSpec{
		MaxSyncWait: metav1.Duration{Duration: 4 * time.Second}}}
	g.Status.ActiveSite = "a"
	return rc, c, g
}

func never() bool { return false }

func cacheWait(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
	}
}

func sessions(t *testing.T, addr string, n int, write bool) int64 {
	t.Helper()
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer func() { _ = cl.Close() }()
	ctx := context.Background()
	for i := range n {
		if write {
			if err := cl.Set(ctx, fmt.Sprintf("session:%d", i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	k, err := cl.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCacheFollowAndPlannedTakeover: the follow points b's cache at a's
// and labels a; a takeover through the adapter (Redis FAILOVER) moves the
// master with every session, and the follow then labels b and leaves a
// replicating from it.
func TestCacheFollowAndPlannedTakeover(t *testing.T) {
	rc, c, g := cacheBed(t)
	ctx := context.Background()
	r := &trafficRecorder{}
	if err := followCaches(ctx, g, c, r, time.Now(), never); err != nil {
		t.Fatal(err)
	}
	if r.site != "a" {
		t.Fatalf("traffic on %q", r.site)
	}
	cacheWait(t, "b replicating a", func() bool {
		got, err := c.replication(ctx, "b")
		return err == nil && got.Role == dragonfly.RoleReplica && got.StableSync
	})
	sessions(t, rc.Addr(0), 100, true)
	src, _ := c.CacheRead(ctx, "a")
	cacheWait(t, "b at a's offset", func() bool {
		got, err := c.CacheRead(ctx, "b")
		return err == nil && got.ReplicaOffset >= src.MasterOffset
	})
	method, err := c.Takeover(ctx, "a", "b", 4*time.Second)
	if err != nil || method != string(dragonfly.MethodFailover) {
		t.Fatalf("takeover %q: %v", method, err)
	}
	g.Status.ActiveSite = "b"
	cacheWait(t, "a following b", func() bool {
		if err := followCaches(ctx, g, c, r, time.Now(), never); err != nil {
			return false
		}
		got, err := c.replication(ctx, "a")
		return err == nil && got.Role == dragonfly.RoleReplica && got.Master.Port == rc.Port(1)
	})
	if r.site != "b" || sessions(t, rc.Addr(1), 0, false) != 100 {
		t.Fatalf("traffic %q, b holds %d sessions", r.site, sessions(t, rc.Addr(1), 0, false))
	}
}

// TestCacheFollowAfterEmergency: MySQL moved to b while a's cache is dead;
// the follow promotes b's cache (takeover impossible, REPLICAOF NO ONE)
// with the sessions it had, then labels it.
func TestCacheFollowAfterEmergency(t *testing.T) {
	rc, c, g := cacheBed(t)
	ctx := context.Background()
	r := &trafficRecorder{}
	if err := followCaches(ctx, g, c, r, time.Now(), never); err != nil {
		t.Fatal(err)
	}
	sessions(t, rc.Addr(0), 20, true)
	cacheWait(t, "b holding a's sessions", func() bool { return sessions(t, rc.Addr(1), 0, false) == 20 })
	rc.Kill(0)
	g.Status.ActiveSite = "b"
	start := time.Now()
	if err := followCaches(ctx, g, c, r, start, never); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the promotion took %s, more than half of maxSyncWait", took)
	}
	got, err := c.CacheRead(ctx, "b")
	if err != nil || !got.Master || r.site != "b" || sessions(t, rc.Addr(1), 0, false) != 20 {
		t.Fatalf("b: %+v %v, traffic %q", got, err, r.site)
	}
}

// TestCacheFollowHeld: a planned failover that began stops the run before
// it changes anything.
func TestCacheFollowHeld(t *testing.T) {
	_, c, g := cacheBed(t)
	r := &trafficRecorder{}
	if err := followCaches(context.Background(), g, c, r, time.Now(), func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	got, err := c.replication(context.Background(), "b")
	if err != nil || got.Role != dragonfly.RoleMaster || r.site != "" {
		t.Fatalf("changed while held: b %+v, traffic %q", got, r.site)
	}
}

// TestCacheFollowAfterEmergencyOldCacheAlive: MySQL moved to b while a's
// cache still runs; the follow hands the cache over from a (FAILOVER),
// every session kept, and a's cache ends up following b's.
func TestCacheFollowAfterEmergencyOldCacheAlive(t *testing.T) {
	rc, c, g := cacheBed(t)
	ctx := context.Background()
	r := &trafficRecorder{}
	if err := followCaches(ctx, g, c, r, time.Now(), never); err != nil {
		t.Fatal(err)
	}
	cacheWait(t, "b replicating a", func() bool {
		got, err := c.replication(ctx, "b")
		return err == nil && got.StableSync
	})
	sessions(t, rc.Addr(0), 50, true)
	g.Status.ActiveSite = "b"
	if err := followCaches(ctx, g, c, r, time.Now(), never); err != nil {
		t.Fatal(err)
	}
	got, err := c.CacheRead(ctx, "b")
	if err != nil || !got.Master || r.site != "b" || sessions(t, rc.Addr(1), 0, false) != 50 {
		t.Fatalf("b: %+v %v, traffic %q", got, err, r.site)
	}
	cacheWait(t, "a following b", func() bool {
		a, err := c.replication(ctx, "a")
		return err == nil && a.Role == dragonfly.RoleReplica && a.Master.Port == rc.Port(1)
	})
}
