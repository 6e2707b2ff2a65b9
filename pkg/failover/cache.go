package failover

import (
	"context"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Cache is each site's cache instance (Dragonfly, or Redis standing in),
// by site name. pkg/dragonfly speaks to the servers; the caller's adapter
// maps site names to them. Every call must end by its context's deadline.
type Cache interface {
	// CacheRead reads site's replication role and offsets.
	CacheRead(ctx context.Context, site string) (CacheRead, error)
	// Takeover makes target, a replica of source, the master without
	// losing what source acknowledged, within timeout (REPLTAKEOVER on
	// Dragonfly, FAILOVER on Redis: dragonfly.Takeover). It returns the
	// method it used, as status records it.
	Takeover(ctx context.Context, source, target string, timeout time.Duration) (string, error)
	// PromoteAlone makes site the master with what it holds (REPLICAOF NO ONE).
	PromoteAlone(ctx context.Context, site string) error
	// KillClients disconnects site's application clients, best effort.
	KillClients(ctx context.Context, site string) error
}

// CacheRead is a cache instance's replication as read.
type CacheRead struct {
	Master bool
	// MasterOffset is master_repl_offset; ReplicaOffset slave_repl_offset
	// (a replica's only).
	MasterOffset, ReplicaOffset int64
}

// CacheRouter moves the cache's traffic label: the <group>-dragonfly
// Service selects the instance that carries it. site "" strips it.
type CacheRouter interface {
	SetCacheTraffic(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) error
}

// CacheNotifier counts cache promotions. A PlannedNotifier that also
// implements it gets bloodraven_dragonfly_promotions_total.
type CacheNotifier interface {
	// DragonflyPromoted counts one promotion of target's cache with result
	// (a DragonflyResult* value).
	DragonflyPromoted(g *v1alpha1.MysqlFailoverGroup, target, result string)
}

// Results of a cache promotion, the values of the metric's result label.
const (
	// DragonflyResultSuccess: the target took over with every session.
	DragonflyResultSuccess = "success"
	// DragonflyResultFailed: the sync or the takeover failed (the target
	// may have been promoted by REPLICAOF NO ONE, sessions not preserved).
	DragonflyResultFailed = "failed"
	// DragonflyResultSkipped: Dragonfly is enabled but this operator has
	// no cache to act through; the phases were skipped.
	DragonflyResultSkipped = "skipped"
)

// Methods recorded in status.plannedFailover.dragonfly.promotionMethod
// besides the takeover's own (REPLTAKEOVER, FAILOVER).
const methodReplicaOfNoOne = "REPLICAOF NO ONE"

// cacheSyncPoll paces the sync wait's reads of the target.
const cacheSyncPoll = 100 * time.Millisecond
