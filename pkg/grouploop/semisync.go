package grouploop

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// semiSyncInput is what topology.PlanSemiSync needs, from the spec, this
// pass's probes and its judged site views (views, in spec order): a site
// that is unreachable or unknown by its debounced state, diverged, or
// whose applier stopped on an error is Down and takes no acknowledger
// slot; one whose receiver is stopped or failing is ReceiverDown.
func (l *Loop) semiSyncInput(g *v1alpha1.MysqlFailoverGroup, views []topology.SiteView) topology.SemiSyncInput {
	spec := g.Spec.MySQL.SemiSync
	active := g.Status.ActiveSite
	in := topology.SemiSyncInput{Enabled: spec.Enabled, Required: spec.DataDurability == v1alpha1.DurabilityRequired,
		Timeout: time.Duration(spec.TimeoutMillis) * time.Millisecond, MinSyncReplicas: int(spec.MinSyncReplicas),
		MaxSyncReplicas: int(spec.MaxSyncReplicas), Active: active, OneAck: l.oneAck(g)}
	view := map[string]topology.SiteView{}
	for _, v := range views {
		view[v.Name] = v
	}
	for _, s := range g.Spec.Sites {
		o := l.obs[s.Name]
		rs := o.status.Replica
		acking := o.err == nil && o.status.SemiSync.ReplicaEnabled && rs != nil && rs.IORunning == mysql.ThreadYes &&
			l.replicatesFrom(o.status, active)
		v, ok := view[s.Name]
		down := !ok || (v.State != v1alpha1.StateWritable && v.State != v1alpha1.StateReadOnly) || v.Diverged ||
			v.Replication.SQLError
		in.Sites = append(in.Sites, topology.SemiSyncSite{Name: s.Name,
			Candidate: s.Role == "" || s.Role == v1alpha1.RolePrimaryCandidate, Acking: acking && !down,
			Down: down, ReceiverDown: o.err == nil && receiverDown(rs), AdminFenced: ok && v.AdminFenced})
	}
	return in
}

// receiverDown reports whether a replica whose status is rs receives
// nothing now: its IO thread is stopped, or retries after an error (cut off
// from its source, refused by it). A reconnect without an error is not.
func receiverDown(rs *mysql.ReplicaStatus) bool {
	return rs != nil && (rs.IORunning == mysql.ThreadNo || (rs.IORunning == mysql.ThreadConnecting && rs.LastIOErrno != 0))
}

// oneAck reports whether the group's servers wait for one acknowledgement
// whatever the count (MariaDB): the spec's flavor, or with auto the
// flavor the active site, or else any site, last answered with. A
// failover's target is made the source with it while the old active site
// may never have answered this process.
func (l *Loop) oneAck(g *v1alpha1.MysqlFailoverGroup) bool {
	if f := g.Spec.MySQL.Flavor; f == v1alpha1.FlavorMariaDB || f == v1alpha1.FlavorMySQL {
		return f == v1alpha1.FlavorMariaDB
	}
	if o, ok := l.last[g.Status.ActiveSite]; ok && o.status.Flavor != "" {
		return o.status.Flavor == v1alpha1.FlavorMariaDB
	}
	for _, s := range g.Spec.Sites {
		if o, ok := l.last[s.Name]; ok && o.status.Flavor != "" {
			return o.status.Flavor == v1alpha1.FlavorMariaDB
		}
	}
	return false
}

// replicatesFrom reports whether a server whose status is st replicates
// from site (its IO thread points at site's replication endpoint).
func (l *Loop) replicatesFrom(st mysql.Status, site string) bool {
	src, err := l.conns.get(site)
	return err == nil && st.Replica != nil && st.Replica.Source() == src.access.Endpoint
}

// semiSyncAcking is a candidate's topology.Replication.SemiSyncAcking,
// from its last answered probe st: its replica part is on and its IO
// thread runs, or retries, against the active site.
func (l *Loop) semiSyncAcking(g *v1alpha1.MysqlFailoverGroup, st mysql.Status) bool {
	rs := st.Replica
	return g.Spec.MySQL.SemiSync.Enabled && st.SemiSync.ReplicaEnabled && rs != nil && rs.IORunning != mysql.ThreadNo &&
		l.replicatesFrom(st, g.Status.ActiveSite)
}

// semiSyncPass is the pass's failover.Pass.SemiSync, from its judged
// site views: nil with the spec off.
func (l *Loop) semiSyncPass(g *v1alpha1.MysqlFailoverGroup, views []topology.SiteView) *topology.SemiSyncInput {
	if !g.Spec.MySQL.SemiSync.Enabled {
		return nil
	}
	in := l.semiSyncInput(g, views)
	return &in
}

// keepSemiSync gives every reachable site its part in semi-sync
// replication (topology.PlanSemiSync), on a healthy or degraded group.
// A server forgets it when mysqld restarts (SET GLOBAL), which its probe
// shows; the source's timeout and count are not in the probe, so what was
// applied is remembered (conns.semiApplied, which also holds what a step
// that made a site writable applied: failover.PrepareWritable), and sent
// again when the plan changes.
func (l *Loop) keepSemiSync(ctx context.Context, p failover.Pass) {
	g := p.Group
	for _, r := range topology.PlanSemiSync(l.semiSyncInput(g, p.Input.Sites)) {
		o := l.obs[r.Site]
		if o.err != nil {
			continue
		}
		ss := o.status.SemiSync
		if ss.SourceEnabled == r.Source && ss.ReplicaEnabled == r.Replica && (!r.Source || l.conns.semiApplied(r.Site) == r) {
			continue
		}
		// Never release a writable site's waiting commits (SourceOffSafe).
		if ss.SourceEnabled && !r.Source && !topology.SourceOffSafe(o.status.Fenced(), failover.MaybeWritable(&g.Status, r.Site)) {
			l.log.Info("semi-sync source part kept until the site is fenced", "site", r.Site)
			continue
		}
		if err := l.conns.ConfigureSemiSync(ctx, r); err != nil {
			l.log.Error(err, "semi-sync", "site", r.Site)
			continue
		}
		l.log.Info("semi-sync set", "site", r.Site, "source", r.Source, "replica", r.Replica,
			"waitCount", r.WaitCount, "timeout", r.Timeout)
	}
}

// ConfigureSemiSync implements failover.DB: it sets r.Site's semi-sync
// part and remembers it (semiApplied); a failure forgets it, so the next
// pass sends it again.
func (c *conns) ConfigureSemiSync(ctx context.Context, r topology.SemiSyncRole) error {
	err := c.configureSemiSync(ctx, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.applied, r.Site)
		return err
	}
	r.Promoting = false
	c.applied[r.Site] = r
	return nil
}

func (c *conns) configureSemiSync(ctx context.Context, r topology.SemiSyncRole) error {
	sc, err := c.get(r.Site)
	if err != nil {
		return err
	}
	ss, ok := sc.inst.(mysql.SemiSyncer)
	if !ok {
		return fmt.Errorf("semi-sync on %s: %w", r.Site, mysql.ErrSemiSyncUnavailable)
	}
	s := mysql.SemiSyncSettings{Source: r.Source, Replica: r.Replica, Timeout: r.Timeout, WaitCount: r.WaitCount,
		Promoting: r.Promoting}
	if err := ss.ConfigureSemiSync(ctx, s); err != nil {
		return fmt.Errorf("semi-sync on %s: %w", r.Site, err)
	}
	return nil
}

// semiApplied is the semi-sync part last applied to site, by a pass's
// keepSemiSync or by a step that made it writable; the zero role when
// none is known.
func (c *conns) semiApplied(site string) topology.SemiSyncRole {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied[site]
}

// recordSemiSync is a probed site's status.sites[].semiSync.
func recordSemiSync(rec *v1alpha1.SiteStatus, ms mysql.Status) {
	ss := ms.SemiSync
	if !ss.SourceEnabled && !ss.ReplicaEnabled {
		rec.SemiSync = nil
		return
	}
	rec.SemiSync = &v1alpha1.SiteSemiSync{Source: ss.SourceEnabled, Replica: ss.ReplicaEnabled,
		Waiting: ss.SourceEnabled && ss.SourceActive, AcknowledgingReplicas: int32(ss.SourceClients),
		CommitsWithoutAck: ss.SourceNoTx}
}

// semiSyncCondition is SemiSyncDegraded: whether the active site's commits
// wait for the acknowledgements the spec asks, why, and what to say.
func (l *Loop) semiSyncCondition(g *v1alpha1.MysqlFailoverGroup) (bool, string, string) {
	spec := g.Spec.MySQL.SemiSync
	active := g.Status.ActiveSite
	o, ok := l.obs[active]
	switch {
	case !spec.Enabled:
		return false, v1alpha1.ReasonSemiSyncOff, "semi-sync replication is off (spec.mysql.semiSync.enabled)"
	case active == "" || !ok || o.err != nil:
		return true, v1alpha1.ReasonSemiSyncUnknown, "the active site's semi-sync state is not observed"
	}
	ss := o.status.SemiSync
	want := max(1, int(spec.MinSyncReplicas))
	if o.status.Flavor == v1alpha1.FlavorMariaDB {
		want = 1
	}
	switch {
	case !ss.SourceEnabled || !ss.SourceActive:
		return true, v1alpha1.ReasonSemiSyncFallback, fmt.Sprintf(
			"%s commits without waiting for a replica: semi-sync fell back to asynchronous replication "+
				"(%d commits without an acknowledgement since mysqld started)", active, ss.SourceNoTx)
	case ss.SourceClients < want:
		return true, v1alpha1.ReasonSemiSyncFewReplies, fmt.Sprintf(
			"%d replicas can acknowledge %s's commits, %d asked (minSyncReplicas)", ss.SourceClients, active, want)
	}
	return false, v1alpha1.ReasonSemiSyncWaiting, fmt.Sprintf(
		"%s's commits wait for %d acknowledgement(s); %d replica(s) acknowledge", active, want, ss.SourceClients)
}

// semiSyncSupport is, for SemiSyncUnavailable, what each site's last
// answered probe showed it lacks for semi-sync.
func (l *Loop) semiSyncSupport(g *v1alpha1.MysqlFailoverGroup) []topology.SemiSyncSupport {
	var out []topology.SemiSyncSupport
	for _, s := range g.Spec.Sites {
		o, ok := l.last[s.Name]
		out = append(out, topology.SemiSyncSupport{Site: s.Name, Observed: ok, Missing: o.status.SemiSync.Missing})
	}
	return out
}

// noteSemiSyncMetrics sets the active site's semi-sync clients and counts
// its falls back to asynchronous replication, seen as the source going
// from waiting to not waiting between two probes.
func (l *Loop) noteSemiSyncMetrics(g *v1alpha1.MysqlFailoverGroup) {
	active := g.Status.ActiveSite
	o, ok := l.obs[active]
	if !ok || o.err != nil || !g.Spec.MySQL.SemiSync.Enabled {
		l.env.Metrics.SemiSyncClients.DeleteLabelValues(g.Namespace, g.Name)
		l.semiWaiting = false
		return
	}
	ss := o.status.SemiSync
	l.env.Metrics.SemiSyncClients.WithLabelValues(g.Namespace, g.Name).Set(float64(ss.SourceClients))
	waiting := ss.SourceEnabled && ss.SourceActive
	if l.semiWaiting && !waiting {
		l.env.Metrics.SemiSyncFallbacks.WithLabelValues(g.Namespace, g.Name).Inc()
	}
	l.semiWaiting = waiting
}
