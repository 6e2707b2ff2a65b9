package grouploop

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/dragonfly"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// cacheConns is failover.Cache over pkg/dragonfly for one group's sites:
// each site's cache is reached at addr(site), by default its
// <group>-<site>-dragonfly Service. Clients are kept per site.
type cacheConns struct {
	addr    func(site string) dragonfly.Endpoint
	mu      sync.Mutex
	clients map[string]*redis.Client
}

var _ failover.Cache = (*cacheConns)(nil)

func newCacheConns(namespace, group string, addr func(ns, group, site string) dragonfly.Endpoint) *cacheConns {
	if addr == nil {
		addr = func(ns, group, site string) dragonfly.Endpoint {
			return dragonfly.Endpoint{Host: routing.CacheSiteHost(ns, group, site), Port: routing.CachePort}
		}
	}
	return &cacheConns{addr: func(site string) dragonfly.Endpoint { return addr(namespace, group, site) },
		clients: map[string]*redis.Client{}}
}

// node opens site's cache, reading its flavor (one INFO server per call).
func (c *cacheConns) node(ctx context.Context, site string) (*dragonfly.Node, error) {
	at := c.addr(site)
	c.mu.Lock()
	cl, ok := c.clients[site]
	if !ok {
		cl = redis.NewClient(&redis.Options{Addr: at.String(), MaxRetries: -1, DialTimeout: time.Second})
		c.clients[site] = cl
	}
	c.mu.Unlock()
	return dragonfly.Open(ctx, cl, at)
}

// Close closes every client.
func (c *cacheConns) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for site, cl := range c.clients {
		_ = cl.Close()
		delete(c.clients, site)
	}
}

func (c *cacheConns) replication(ctx context.Context, site string) (dragonfly.Replication, error) {
	n, err := c.node(ctx, site)
	if err != nil {
		return dragonfly.Replication{}, err
	}
	return n.Replication(ctx)
}

// CacheRead implements failover.Cache.
func (c *cacheConns) CacheRead(ctx context.Context, site string) (failover.CacheRead, error) {
	r, err := c.replication(ctx, site)
	if err != nil {
		return failover.CacheRead{}, err
	}
	return failover.CacheRead{Master: r.Role == dragonfly.RoleMaster, MasterOffset: r.MasterOffset,
		ReplicaOffset: r.ReplicaOffset}, nil
}

// Takeover implements failover.Cache. A source that does not answer is
// left out: Dragonfly's replica reaches it itself, Redis cannot hand over.
func (c *cacheConns) Takeover(ctx context.Context, source, target string, timeout time.Duration) (string, error) {
	tn, err := c.node(ctx, target)
	if err != nil {
		return "", err
	}
	sn, err := c.node(ctx, source)
	if err != nil {
		sn = nil
	}
	m, err := dragonfly.Takeover(ctx, sn, tn, timeout)
	return string(m), err
}

// PromoteAlone implements failover.Cache.
func (c *cacheConns) PromoteAlone(ctx context.Context, site string) error {
	n, err := c.node(ctx, site)
	if err != nil {
		return err
	}
	return n.ReplicaOfNoOne(ctx)
}

// KillClients implements failover.Cache.
func (c *cacheConns) KillClients(ctx context.Context, site string) error {
	n, err := c.node(ctx, site)
	if err != nil {
		return err
	}
	_, err = n.KillNormalClients(ctx)
	return err
}

// replicaOf points site's cache at master's.
func (c *cacheConns) replicaOf(ctx context.Context, site, master string) error {
	n, err := c.node(ctx, site)
	if err != nil {
		return err
	}
	return n.ReplicaOf(ctx, c.addr(master))
}

// reads reads every site's cache for topology.PlanCacheFollow, each read
// bounded by per.
func (c *cacheConns) reads(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, per time.Duration) []topology.CacheSiteRead {
	var out []topology.CacheSiteRead
	for _, s := range g.Spec.Sites {
		rctx, cancel := context.WithTimeout(ctx, per)
		r, err := c.replication(rctx, s.Name)
		cancel()
		read := topology.CacheSiteRead{Site: s.Name, Read: err == nil, Master: r.Role == dragonfly.RoleMaster}
		for _, o := range g.Spec.Sites {
			if err == nil && !read.Master && c.addr(o.Name) == r.Master {
				read.MasterSite = o.Name
			}
		}
		out = append(out, read)
	}
	return out
}

// followCaches runs one topology.PlanCacheFollow: the active site's cache
// is promoted when it is still a replica (failover.PromoteCacheEmergency),
// the others are pointed at it, and the traffic label moves to it.
// held is asked before each change: a planned failover that began since
// the run started owns the caches, and the run stops.
func followCaches(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, c *cacheConns, router failover.CacheRouter,
	start time.Time, held func() bool) error {
	active := g.Status.ActiveSite
	plan := topology.PlanCacheFollow(active, c.reads(ctx, g, time.Second))
	if held() {
		return nil
	}
	if plan.Promote {
		res := failover.PromoteCacheEmergency(ctx, c, router, g, plan.PromoteFrom, active,
			g.Spec.Dragonfly.PlannedFailover.MaxSyncWait.Duration, start)
		return res.Err
	}
	for _, site := range plan.Repoint {
		if held() {
			return nil
		}
		if err := c.replicaOf(ctx, site, active); err != nil {
			return fmt.Errorf("cache follow: %s replicates from %s: %w", site, active, err)
		}
	}
	if plan.Traffic != "" && router != nil && !held() {
		return router.SetCacheTraffic(ctx, g, plan.Traffic)
	}
	return nil
}

// cacheFollower runs followCaches beside the loop, one run at a time, so a
// pass never waits on a cache. While a planned failover is requested or in
// flight it is held: a run in progress stops before its next change (a
// change already sent completes; the planned phases set the label last).
type cacheFollower struct {
	conns   *cacheConns
	router  failover.CacheRouter
	running atomic.Bool
	planned atomic.Bool
}

// hold records whether a planned failover owns the caches this pass.
func (f *cacheFollower) hold(g *v1alpha1.MysqlFailoverGroup) {
	f.planned.Store(failover.Requested(g) || failover.PlannedInFlight(&g.Status))
}

// follow starts a run for a copy of g unless one is running or a planned
// failover holds the caches.
func (f *cacheFollower) follow(ctx context.Context, l *Loop, g *v1alpha1.MysqlFailoverGroup) {
	f.hold(g)
	if !g.Spec.Dragonfly.Enabled || f.planned.Load() || !f.running.CompareAndSwap(false, true) {
		return
	}
	g = g.DeepCopy()
	budget := g.Spec.Dragonfly.PlannedFailover.MaxSyncWait.Duration + 5*time.Second
	go func() {
		defer f.running.Store(false)
		cctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		if err := followCaches(cctx, g, f.conns, f.router, l.env.Clock.Now(), f.planned.Load); err != nil {
			l.log.V(1).Info("cache follow", "error", err.Error())
		}
	}()
}
