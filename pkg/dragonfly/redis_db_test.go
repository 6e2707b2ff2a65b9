//go:build db

package dragonfly

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shipstream/bloodraven/internal/testbed"
)

// redisPair starts two real Redis 7 servers, server 1 replicating from
// server 0, and returns their nodes. It fails when redis-server is missing.
func redisPair(t *testing.T) (*testbed.RedisCluster, *Node, *Node) {
	t.Helper()
	rc := testbed.StartRedis(t, 2)
	nodes := make([]*Node, 2)
	for i := range nodes {
		c := redis.NewClient(&redis.Options{Addr: rc.Addr(i), MaxRetries: -1, ReadTimeout: 2 * time.Second})
		t.Cleanup(func() { _ = c.Close() })
		n, err := Open(context.Background(), c, Endpoint{testbed.Host, rc.Port(i)})
		if err != nil {
			t.Fatal(err)
		}
		if n.Flavor() != FlavorRedis {
			t.Fatalf("flavor %q, want redis", n.Flavor())
		}
		nodes[i] = n
	}
	if err := nodes[1].ReplicaOf(context.Background(), nodes[0].Endpoint()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "stable sync", func() bool {
		r, err := nodes[1].Replication(context.Background())
		return err == nil && r.StableSync
	})
	return rc, nodes[0], nodes[1]
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", what, d)
		}
	}
}

func write(t *testing.T, n *Node, keys int) {
	t.Helper()
	for i := range keys {
		if err := n.client.Set(context.Background(), fmt.Sprintf("session:%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func keys(t *testing.T, n *Node) int64 {
	t.Helper()
	k, err := n.client.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRedisSyncWait: the replica's slave_repl_offset reaches the master's
// master_repl_offset captured after the writes.
func TestRedisSyncWait(t *testing.T) {
	_, m, r := redisPair(t)
	ctx := context.Background()
	write(t, m, 200)
	src, err := m.Replication(ctx)
	if err != nil || src.Role != RoleMaster || src.MasterOffset == 0 {
		t.Fatalf("master: %+v, %v", src, err)
	}
	waitFor(t, 5*time.Second, "replica at the captured offset", func() bool {
		got, err := r.Replication(ctx)
		return err == nil && got.ReplicaOffset >= src.MasterOffset
	})
	if k := keys(t, r); k != 200 {
		t.Fatalf("replica holds %d keys, want 200", k)
	}
}

// TestRedisTakeoverByFailover: FAILOVER moves the master role with every
// key, and the old master follows the new one.
func TestRedisTakeoverByFailover(t *testing.T) {
	_, m, r := redisPair(t)
	ctx := context.Background()
	write(t, m, 100)
	method, err := Takeover(ctx, m, r, 5*time.Second)
	if err != nil || method != MethodFailover {
		t.Fatalf("Takeover = %q, %v", method, err)
	}
	if got, _ := r.Replication(ctx); got.Role != RoleMaster {
		t.Fatalf("target role %q", got.Role)
	}
	if k := keys(t, r); k != 100 {
		t.Fatalf("new master holds %d keys, want 100", k)
	}
	waitFor(t, 5*time.Second, "old master replicating from the new", func() bool {
		got, err := m.Replication(ctx)
		return err == nil && got.Role == RoleReplica && got.Master.Port == r.Endpoint().Port
	})
	if _, err := m.KillNormalClients(ctx); err != nil {
		t.Fatalf("KillNormalClients: %v", err)
	}
}

// TestRedisTakeoverTimeout: a replica that stops acknowledging (paused)
// makes FAILOVER abort at its timeout; the master keeps the role and takes
// writes again.
func TestRedisTakeoverTimeout(t *testing.T) {
	rc, m, r := redisPair(t)
	ctx := context.Background()
	rc.Pause(1)
	defer rc.Resume(1)
	write(t, m, 50)
	start := time.Now()
	_, err := Takeover(ctx, m, r, 300*time.Millisecond)
	if !errors.Is(err, ErrTakeoverFailed) {
		t.Fatalf("Takeover = %v, want ErrTakeoverFailed", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the timeout path took %s", took)
	}
	got, err := m.Replication(ctx)
	if err != nil || got.Role != RoleMaster {
		t.Fatalf("old master: %+v, %v", got, err)
	}
	write(t, m, 1) // writable again after the abort
}

// TestRedisPromotionWhileMasterDown: with the master killed, a takeover
// cannot run; REPLICAOF NO ONE promotes the replica with what it holds.
func TestRedisPromotionWhileMasterDown(t *testing.T) {
	rc, m, r := redisPair(t)
	ctx := context.Background()
	write(t, m, 30)
	src, _ := m.Replication(ctx)
	waitFor(t, 5*time.Second, "replica caught up", func() bool {
		got, err := r.Replication(ctx)
		return err == nil && got.ReplicaOffset >= src.MasterOffset
	})
	rc.Kill(0)
	if _, err := Takeover(ctx, m, r, time.Second); !errors.Is(err, ErrTakeoverFailed) {
		t.Fatalf("takeover from a dead master: %v", err)
	}
	if err := r.ReplicaOfNoOne(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := r.Replication(ctx)
	if err != nil || got.Role != RoleMaster {
		t.Fatalf("promoted: %+v, %v", got, err)
	}
	if k := keys(t, r); k != 30 {
		t.Fatalf("promoted replica holds %d keys, want 30", k)
	}
}
