package grouploop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// act runs the pass's one topology operation.
func (l *Loop) act(ctx context.Context, p failover.Pass) {
	l.cache.hold(p.Group)
	if l.plannedAct(ctx, p) || l.adminFenceAct(ctx, p) {
		return
	}
	g, d := p.Group, p.Decision
	st := &g.Status
	var err error
	switch {
	case failover.PlannedInFlight(st):
		// A planned failover owns the topology: only plannedAct acts on it.
	case d.Kind == topology.KindFenceExtraWriters || d.Kind == topology.KindSplitBrain:
		err = l.fenceExtras(ctx, p)
	case st.Failover != nil || d.Start:
		var out failover.Outcome
		out, err = l.emergency.Advance(ctx, p)
		l.afterEmergency(g, out)
	case st.ActiveSite == "":
		err = l.adoptAuthority(ctx, g, d.Active)
	case d.Kind == topology.KindNoPrimary:
		err = l.reassert(ctx, p, d.Target)
	case d.Kind == topology.KindHealthy || d.Kind == topology.KindDegraded:
		l.maintain(ctx, p)
		l.maintained = true
	}
	if err != nil {
		l.log.Error(err, "act", "decision", d.String())
	}
}

// afterEmergency logs the sequence's progress, a wait only when it changes.
func (l *Loop) afterEmergency(g *v1alpha1.MysqlFailoverGroup, out failover.Outcome) {
	wait := string(out.Step) + ": " + out.Waiting
	if out.Started || out.Completed || (out.Waiting != "" && wait != l.lastWait) {
		l.lastWait = wait
		l.log.Info("emergency failover", "step", out.Step, "started", out.Started, "completed", out.Completed,
			"waiting", out.Waiting, "generation", g.Status.TopologyGeneration)
	}
}

// adoptAuthority persists the site Decide resolved when no active site is
// recorded, at a new generation: one generation names one site, or peers
// that hold the old one would count as having adopted the new view, and a
// sidecar relaying the old view would keep the old site's lease alive.
func (l *Loop) adoptAuthority(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) error {
	g.Status.ActiveSite = site
	g.Status.TopologyGeneration++
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		return err
	}
	l.env.Registry.Publish(g)
	return nil
}

// fenceExtras fences every writer but the authority, all at once, within
// this pass. With the authority lost (split brain) the winner is persisted first.
func (l *Loop) fenceExtras(ctx context.Context, p failover.Pass) error {
	g, d := p.Group, p.Decision
	if g.Status.ActiveSite == "" {
		if err := l.adoptAuthority(ctx, g, d.Active); err != nil {
			return err
		}
	}
	errs := make([]error, len(d.Fence))
	var wg sync.WaitGroup
	for i, site := range d.Fence {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
			defer cancel()
			errs[i] = l.conns.Fence(cctx, site)
		})
	}
	wg.Wait()
	var failed []string
	for i, site := range d.Fence {
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
			continue
		}
		failover.RecordFenced(&g.Status, site)
		l.env.Metrics.ExtraWritersFenced.WithLabelValues(g.Namespace, g.Name, site).Inc()
		l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventExtraWriterFenced,
			fmt.Sprintf("%s was writable besides active site %s (%s): fenced", site, d.Active, d.Reason))
	}
	if len(failed) > 0 {
		return fmt.Errorf("fence extra writers: %s", strings.Join(failed, "; "))
	}
	return nil
}

// reassert makes the active site writable again: it was found fenced and no
// other site can write. It waits (bounded) for the site's live sidecar to
// hold the current generation, or that sidecar would fence it right back.
func (l *Loop) reassert(ctx context.Context, p failover.Pass, site string) error {
	g := p.Group
	now := l.env.Clock.Now()
	if gen, live := p.Sidecar(site); live && gen < g.Status.TopologyGeneration {
		since, ok := l.waitSince["reassert"]
		if !ok {
			since = now
			l.waitSince["reassert"] = since
		}
		if now.Sub(since) < p.Settings.AdoptionWait {
			return nil
		}
	}
	delete(l.waitSince, "reassert")
	if err := p.MayMakeWritable(ctx, site, time.Time{}); err != nil {
		return fmt.Errorf("re-assert %s: %w", site, err) // the next pass observes again
	}
	// Claimed (persisted exclusively) before the site can write: no other
	// operator process wrote the group since this pass read it.
	wctx, wcancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	c, err := failover.Claim(wctx, l.patcher, g, site)
	wcancel()
	if err != nil {
		return fmt.Errorf("re-assert %s: %w", site, err)
	}
	// Its lease fence armed and its semi-sync source set before it can
	// write (failover.PrepareWritable); if not, nothing made it writable,
	// and the claim is withdrawn (persisted with the pass's status).
	if err := failover.PrepareWritable(ctx, p, l.conns, l.env.Notifier, l.env.Clock.Now(), site); err != nil {
		wctx, wcancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
		werr := failover.WithdrawClaim(wctx, l.patcher, g, c)
		wcancel()
		if werr != nil {
			return fmt.Errorf("re-assert %s: %w (%w)", site, err, werr)
		}
		return fmt.Errorf("re-assert %s: %w", site, err)
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	// Promote, not a bare unfence: a writable site must not keep replicating.
	if _, err := l.conns.Promote(cctx, site, failover.PromoteOpts(p, site)); err != nil {
		err = fmt.Errorf("re-assert %s: %w", site, err)
		l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventMaybeWritable,
			failover.MarkMaybeWritable(&g.Status, site, err))
		return err // the mark is persisted with the pass's status
	}
	failover.RecordWritable(&g.Status, site)
	l.proveAfterRelease(ctx, p, site)
	l.env.Metrics.Reasserts.WithLabelValues(g.Namespace, g.Name).Inc()
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventPrimaryReasserted,
		fmt.Sprintf("active site %s was fenced and no other site could write: made writable again (generation %d)",
			site, g.Status.TopologyGeneration))
	if l.env.Router != nil {
		if err := l.env.Router.SetRoleLabels(cctx, g, site); err != nil {
			return fmt.Errorf("re-assert %s: %w", site, err)
		}
	}
	return nil
}

// maintain keeps a healthy or degraded group in shape: role labels on the
// active site, divergence marks, and every clean read-only site replicating
// from the active site.
func (l *Loop) maintain(ctx context.Context, p failover.Pass) {
	g := p.Group
	st := &g.Status
	active, ok := l.last[st.ActiveSite]
	if !ok || l.obs[st.ActiveSite].err != nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	defer cancel()
	if l.env.Router != nil {
		if err := l.env.Router.SetRoleLabels(cctx, g, st.ActiveSite); err != nil {
			l.log.Error(err, "role labels")
		}
	}
	l.markDivergence(g, p.Decision)
	for _, s := range p.Input.Sites {
		o := l.obs[s.Name]
		if s.Name == st.ActiveSite || o.err != nil || s.State != v1alpha1.StateReadOnly ||
			(s.Diverged && !recloneRepoints(g, s.Name)) ||
			recloneKeepsStopped(g, s.Name) || !needsRepoint(o, l.conns, st.ActiveSite) {
			continue
		}
		if !withoutOwn(gtid.Lacks(active.status.Executed, o.status.Executed), serverID(active.status)).IsEmpty() {
			continue // divergence is marked by Decide's report, never repaired here
		}
		if err := l.conns.ReplicateFrom(cctx, s.Name, st.ActiveSite); err != nil {
			l.log.Error(err, "repoint", "site", s.Name)
		}
	}
	l.keepSemiSync(cctx, p)
	l.armSilentLeaseFence(ctx, p)
	l.cache.follow(ctx, l, g)
}

// armSilentLeaseFence arms the writable active site's lease fence when its
// sidecar went silent (topology.SilentLeaseFence): the event a paused
// sidecar could not arm after letting go of its write hold. A refusal
// under a write hold needs nothing: no write commits under it.
func (l *Loop) armSilentLeaseFence(ctx context.Context, p failover.Pass) {
	site := p.Group.Status.ActiveSite
	if o := l.obs[site]; o.err != nil || !o.status.Writable() {
		return
	}
	asked := l.sidecarAskedAt(site)
	after, ok := topology.SilentLeaseFence(topology.LeaseFenceArm{Site: site, Now: l.env.Clock.Now(),
		SidecarAskedAt: asked, LeaseTimeout: p.Settings.LeaseTimeout,
		PeerCheckInterval: p.Settings.PeerCheckInterval, Margin: p.Settings.LeaseFenceTimeout})
	if !ok || l.silentArm[site].Equal(asked) {
		return // armed for this ask already: arming again would only move the event later
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.LeaseFenceTimeout)
	defer cancel()
	err := l.conns.ArmLeaseFence(cctx, site, after)
	if err == nil {
		l.silentArm[site] = asked
	} else if !errors.Is(err, failover.ErrWritesHeld) {
		l.log.Error(err, "arm the lease fence of a site whose sidecar is silent", "site", site)
	}
}

// needsRepoint reports whether a read-only site does not replicate from the
// active site (or stopped without an error, or connects without the TLS the
// active site's access asks for); broken replication is left for a
// person, it is reported as ReplicationBroken.
func needsRepoint(o observation, c *conns, active string) bool {
	rs := o.status.Replica
	if rs == nil {
		return true
	}
	src, err := c.get(active)
	if err != nil {
		return false
	}
	if rs.Source() != src.access.Endpoint {
		return true
	}
	return rs.Err() == nil && (!rs.SQLRunning || rs.IORunning == mysql.ThreadNo ||
		!rs.UsesTLS(src.access.Replication.TLS))
}
