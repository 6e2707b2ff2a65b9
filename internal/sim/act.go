package sim

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// act runs the decision: fencing itself, topology changes through the
// sequencers, re-assertion and replica repointing itself.
func (o *operator) act(now time.Time, d topology.Decision, in topology.Input) {
	switch d.Kind {
	case topology.KindFenceExtraWriters, topology.KindSplitBrain:
		for _, name := range d.Fence {
			_ = o.ops.Fence(name) // retried next cycle if it did not get through
		}
		if d.Kind == topology.KindSplitBrain {
			o.st.ActiveSite = d.Active
		}
		return
	}
	c := &Cycle{Now: now, Decision: d, Input: in, Status: o.st, Ops: o.ops, Logf: o.w.logf,
		Settings:          Settings{Cooldown: o.w.cfg.Cooldown, MaxLagWait: o.w.cfg.MaxLagWait, DrainTimeout: o.w.cfg.DrainTimeout},
		SidecarGeneration: o.sidecarGeneration, Break: o.w.cfg.Break}
	switch {
	case o.plannedWants(c):
		o.w.cfg.Planned.Step(c)
	case o.st.Intent != nil || startsFailover(d):
		o.w.cfg.Emergency.Step(c)
	case d.Kind == topology.KindNoPrimary:
		o.reassert(d.Target)
	case d.Kind == topology.KindHealthy || d.Kind == topology.KindDegraded:
		o.repoint()
	}
}

// startsFailover reports whether d asks for an emergency failover to begin:
// a Failover, or one blocked only on the old primary's fence (whose intent may
// be published, so that sidecars fence by view).
func startsFailover(d topology.Decision) bool {
	return d.Kind == topology.KindFailover ||
		(d.Kind == topology.KindFailoverBlocked && d.Wanted == topology.KindFailover &&
			d.Reason == v1alpha1.ReasonFenceUnconfirmed && d.Target != "")
}

// sidecarGeneration is the generation the site's current sidecar was last seen holding.
func (o *operator) sidecarGeneration(name string) int64 {
	s, ok := o.w.siteByName(name)
	if !ok || o.mem.genSeenAt[s.idx].Before(s.startedAt) {
		return 0
	}
	return o.mem.genSeen[s.idx]
}

// reassert makes the active site writable again once its sidecar holds the
// current view (otherwise the sidecar could fence it right back). A site that
// still replicates (a promotion that stopped halfway) first drains its relay
// log and stops replicating, as a promotion would.
func (o *operator) reassert(target string) {
	if o.sidecarGeneration(target) < o.st.Generation {
		return
	}
	s, err := o.ops.Status(target)
	if err != nil || (s.Source != "" && !s.Executed.Contains(s.Received)) {
		return
	}
	if s.Source != "" && o.ops.StopReplica(target) != nil {
		return
	}
	if err := o.ops.Unfence(target); err == nil {
		o.w.stats.Reasserts++
	}
}

// repoint points every reachable, non-diverged replica at the active site,
// after checking it holds nothing the active site lacks.
func (o *operator) repoint() {
	a := o.activeIdx()
	if !o.mem.fresh[a] || o.mem.last[a].ReadOnly {
		return
	}
	active := o.mem.last[a]
	for i, s := range o.w.sites {
		rec, st := &o.st.Sites[i], o.mem.last[i]
		if i == a || !o.mem.fresh[i] || !rec.Divergent.IsEmpty() || st.Source == active.Site || !st.ReadOnly {
			continue
		}
		if errant := gtid.Errant(st.Executed, active.Executed); !errant.IsEmpty() && o.w.cfg.Break&BreakRejoinCheck == 0 {
			rec.Divergent = errant
			o.w.logf("operator marks %s diverged: %s", s.name, errant)
			continue
		}
		_ = o.ops.ReplicateFrom(s.name, active.Site)
	}
}

// guardedOps is the operator's SiteOps: it keeps MayBeWritable up to date
// around fences and unfences, and refuses to unfence anything but the
// published active site, or while another site may still write.
type guardedOps struct {
	o   *operator
	raw netOps
}

func (g guardedOps) Status(site string) (SiteStatus, error) { return g.raw.Status(site) }

func (g guardedOps) ReplicateFrom(site, source string) error {
	return g.raw.ReplicateFrom(site, source)
}

func (g guardedOps) StopReplica(site string) error { return g.raw.StopReplica(site) }

func (g guardedOps) Fence(site string) error {
	if err := g.raw.Fence(site); err != nil {
		return err
	}
	if rec := g.o.st.Site(site); rec.MayBeWritable {
		rec.MayBeWritable = false
		if it := g.o.st.Intent; it != nil && it.From == site {
			it.ConfirmedBy = ConfirmedBySQL
		}
		g.o.w.logf("operator confirms %s cannot write (%s)", site, ConfirmedBySQL)
	}
	return nil
}

// refuse refuses an unsafe operation: the guard kept it from happening,
// but a sequence that asked for it is wrong, so it is a violation.
func (g guardedOps) refuse(err error) error {
	g.o.w.check.violate(InvariantGuard, err.Error())
	return err
}

func (g guardedOps) Unfence(site string) error {
	st := g.o.st
	if site != st.ActiveSite {
		return g.refuse(fmt.Errorf("unfence %s, active site is %s: %w", site, st.ActiveSite, ErrUnsafe))
	}
	for i, rec := range st.Sites {
		seenFenced := g.o.mem.fresh[i] && g.o.mem.last[i].ReadOnly
		if rec.Name != site && rec.MayBeWritable && !seenFenced {
			return g.refuse(fmt.Errorf("unfence %s while %s may write: %w", site, rec.Name, ErrUnsafe))
		}
	}
	rec := st.Site(site)
	rec.MayBeWritable, rec.UnfencedAt = true, g.o.w.now()
	return g.raw.Unfence(site)
}
