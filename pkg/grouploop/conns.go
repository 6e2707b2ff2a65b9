package grouploop

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Opener opens a mysql.Instance; mysql.Open is the default.
type Opener func(mysql.Config) (mysql.Instance, error)

// siteConn is one site's resolved access and open Instance.
type siteConn struct {
	access SiteAccess
	inst   mysql.Instance
}

// conns holds one group's Instances, reopened when a site's access changes.
// It implements failover.DB. Safe for concurrent use (probes run in parallel).
type conns struct {
	resolver Resolver
	open     Opener
	// promoted hears every site a Promote or Unfence made writable; nil: nobody.
	promoted func(site string)
	mu       sync.Mutex
	sites    map[string]*siteConn
	errs     map[string]error
	// applied is each site's semi-sync part as ConfigureSemiSync last set
	// it (semisync.go).
	applied map[string]topology.SemiSyncRole
}

func newConns(r Resolver, open Opener) *conns {
	return &conns{resolver: r, open: open, sites: map[string]*siteConn{}, errs: map[string]error{},
		applied: map[string]topology.SemiSyncRole{}}
}

// refresh resolves every site of g, reopening Instances whose access changed
// and closing those of sites no longer in the spec. A site that cannot be
// resolved keeps no Instance and its verbs fail with the resolve error.
func (c *conns) refresh(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) {
	want := map[string]bool{}
	for _, s := range g.Spec.Sites {
		want[s.Name] = true
		acc, err := c.resolver.Resolve(ctx, g, s.Name)
		if err == nil {
			err = c.ensure(s.Name, acc)
		}
		c.mu.Lock()
		c.errs[s.Name] = err
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, sc := range c.sites {
		if !want[name] {
			_ = sc.inst.Close()
			delete(c.sites, name)
		}
	}
}

func (c *conns) ensure(site string, acc SiteAccess) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.sites[site]; ok && reflect.DeepEqual(sc.access, acc) {
		return nil
	} else if ok {
		_ = sc.inst.Close()
		delete(c.sites, site)
	}
	inst, err := c.open(acc.Config)
	if err != nil {
		return fmt.Errorf("open %s: %w", site, err)
	}
	c.sites[site] = &siteConn{access: acc, inst: inst}
	return nil
}

func (c *conns) get(site string) (*siteConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.sites[site]; ok {
		return sc, nil
	}
	if err := c.errs[site]; err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("site %s: %w", site, ErrUnknownSite)
}

func (c *conns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, sc := range c.sites {
		_ = sc.inst.Close()
		delete(c.sites, name)
	}
}

// Status observes site.
func (c *conns) Status(ctx context.Context, site string) (mysql.Status, error) {
	sc, err := c.get(site)
	if err != nil {
		return mysql.Status{}, err
	}
	return sc.inst.Status(ctx)
}

// Fence implements failover.DB.
func (c *conns) Fence(ctx context.Context, site string) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	if err := sc.inst.Fence(ctx); err != nil {
		return fmt.Errorf("fence %s: %w", site, err)
	}
	return nil
}

// StopReplication stops site's replication threads (a reclone, before the
// site's data is replaced): it acknowledges nothing more.
func (c *conns) StopReplication(ctx context.Context, site string) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	if err := sc.inst.StopReplication(ctx); err != nil {
		return fmt.Errorf("stop replication on %s: %w", site, err)
	}
	return nil
}

// DrainRelayLog implements failover.DB: a site without replication has
// nothing to drain, and a timeout is failover.ErrDrainPending.
func (c *conns) DrainRelayLog(ctx context.Context, site string, timeout time.Duration) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	err = sc.inst.DrainRelayLog(ctx, timeout)
	switch {
	case err == nil, errors.Is(err, mysql.ErrNotReplica):
		return nil
	case errors.Is(err, mysql.ErrTimeout):
		return fmt.Errorf("drain %s: %w: %w", site, failover.ErrDrainPending, err)
	}
	return fmt.Errorf("drain %s: %w", site, err)
}

// Promote implements failover.DB. A source part set under the lock is
// remembered as ConfigureSemiSync's is; one that failed is forgotten, so
// the next pass sends it again.
func (c *conns) Promote(ctx context.Context, site string, opts failover.PromoteOptions) (failover.Promotion, error) {
	sc, err := c.get(site)
	if err != nil {
		return failover.Promotion{}, err
	}
	mo := mysql.PromoteOptions{SemiSyncBestEffort: opts.SemiSyncBestEffort}
	if r := opts.SemiSync; r != nil {
		mo.SemiSync = &mysql.SemiSyncSettings{Source: r.Source, Replica: r.Replica, Timeout: r.Timeout, WaitCount: r.WaitCount}
	}
	pr, err := sc.inst.Promote(ctx, mo)
	if opts.SemiSync != nil {
		c.mu.Lock()
		delete(c.applied, site)
		if err == nil && pr.SemiSyncErr == nil {
			r := *opts.SemiSync
			r.Promoting = false
			c.applied[site] = r
		}
		c.mu.Unlock()
	}
	if err != nil {
		return failover.Promotion{}, fmt.Errorf("promote %s: %w", site, err)
	}
	if c.promoted != nil {
		c.promoted(site)
	}
	return failover.Promotion{Executed: pr.Executed, Retrieved: pr.Retrieved, RetrievedUnknown: pr.RetrievedUnknown}, nil
}

// ArmLeaseFence implements failover.DB: a lock wait on the sidecar's
// write hold is failover.ErrWritesHeld.
func (c *conns) ArmLeaseFence(ctx context.Context, site string, after time.Duration) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	err = sc.inst.ArmLeaseFence(ctx, after)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mysql.ErrWritesHeld):
		return fmt.Errorf("arm %s's lease fence: %w: %w", site, failover.ErrWritesHeld, err)
	}
	return fmt.Errorf("arm %s's lease fence: %w", site, err)
}

// ReplicateFrom implements failover.DB: site follows source at the address
// replicas reach source by, with source's replication account.
func (c *conns) ReplicateFrom(ctx context.Context, site, source string) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	src, err := c.get(source)
	if err != nil {
		return err
	}
	if err := sc.inst.ReplicateFrom(ctx, src.access.Endpoint, src.access.Replication); err != nil {
		return fmt.Errorf("repoint %s at %s: %w", site, source, err)
	}
	return nil
}

// SalvageRead implements failover.DB.
func (c *conns) SalvageRead(ctx context.Context, site string) (bool, gtid.Set, error) {
	st, err := c.Status(ctx, site)
	if err != nil {
		return false, gtid.Set{}, fmt.Errorf("read %s: %w", site, err)
	}
	return st.Fenced(), st.Executed, nil
}

// RelayRead implements failover.DB. A site without replication has
// received nothing (its relay log is gone); a received set that cannot be
// parsed is an error, never taken for a shrunk one. Uptime tells a mysqld
// restarted since the probe (topology.JudgeDrain).
func (c *conns) RelayRead(ctx context.Context, site string) (topology.RelayRead, error) {
	st, err := c.Status(ctx, site)
	if err != nil {
		return topology.RelayRead{}, fmt.Errorf("read %s's replication: %w", site, err)
	}
	r := topology.RelayRead{Executed: st.Executed, Uptime: st.Uptime}
	if rs := st.Replica; rs != nil {
		if r.Retrieved, err = rs.RetrievedSet(st.Flavor); err != nil {
			return topology.RelayRead{}, fmt.Errorf("read %s's received set: %w", site, err)
		}
		r.Applying = rs.SQLRunning && rs.LastSQLErrno == 0
	}
	if r.Applying {
		sc, err := c.get(site)
		if err != nil {
			return topology.RelayRead{}, err
		}
		// Unread, a busy applier is judged on its commits alone.
		if aw, err := sc.inst.ApplierWork(ctx); err == nil {
			r.ApplierTrx, r.ApplierRows = aw.Trx, aw.Rows
		}
	}
	return r, nil
}

// Salvage implements failover.DB: source is read again, and must be
// fenced, right before site replicates from it, through the address and
// replication account ReplicateFrom uses.
func (c *conns) Salvage(ctx context.Context, site, source string, until, expect gtid.Set,
	part *topology.SemiSyncRole) (gtid.Set, error) {
	sc, err := c.get(site)
	if err != nil {
		return gtid.Set{}, err
	}
	src, err := c.get(source)
	if err != nil {
		return gtid.Set{}, err
	}
	st, err := src.inst.Status(ctx)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("salvage from %s: read it: %w", source, err)
	}
	if !st.Fenced() {
		return gtid.Set{}, fmt.Errorf("salvage from %s: %w", source, failover.ErrSalvageSourceWritable)
	}
	var ms *mysql.SemiSyncSettings
	if part != nil {
		ms = &mysql.SemiSyncSettings{Source: part.Source, Replica: part.Replica, Timeout: part.Timeout, WaitCount: part.WaitCount}
		// What the salvage sets is not known for sure: the next pass
		// sends the site's part again.
		c.mu.Lock()
		delete(c.applied, site)
		c.mu.Unlock()
	}
	set, err := sc.inst.SalvageFrom(ctx, src.access.Endpoint, src.access.Replication, until, expect, ms)
	if errors.Is(err, mysql.ErrSalvageTargetMoved) {
		return set, fmt.Errorf("salvage %s from %s: %w: %w", site, source, failover.ErrSalvageTargetMoved, err)
	}
	if errors.Is(err, mysql.ErrSalvageTargetWritable) {
		return set, fmt.Errorf("salvage %s from %s: %w: %w", site, source, failover.ErrSalvageTargetWritable, err)
	}
	if err != nil {
		return set, fmt.Errorf("salvage %s from %s: %w", site, source, err)
	}
	return set, nil
}
