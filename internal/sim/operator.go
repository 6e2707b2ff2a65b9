package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// maxLag is the lag above which the sim's operator calls a replica lagging.
const maxLag = 10 * time.Second

// operator is the sim's operator: it observes every site through the real
// topology.Debouncer, decides with the real topology.Decide, and acts through
// the sequencer seams. Its Status survives a restart; its memory does not.
type operator struct {
	w       *World
	up      bool
	started time.Time
	st      *Status
	mem     memory
	ops     guardedOps
	lastD   string
}

// memory is what the operator knows only while it runs.
type memory struct {
	deb         []*topology.Debouncer
	last        []SiteStatus // last successful status with mysqld up
	fresh       []bool       // last probed this cycle with mysqld up
	lastContact []time.Time
	safeAt      []time.Time
	genSeen     []int64
	genSeenAt   []time.Time
}

func newOperator(w *World) *operator {
	o := &operator{w: w, st: &Status{ActiveSite: w.sites[0].name, Generation: 1, ActiveSourceID: w.sites[0].uuid}}
	for _, s := range w.sites {
		o.st.Sites = append(o.st.Sites, SiteRecord{Name: s.name, MayBeWritable: s.idx == 0, UnfencedAt: w.now()})
	}
	o.ops = guardedOps{o: o, raw: netOps{w}}
	o.restart(w.now())
	return o
}

// restart starts the operator with empty memory.
func (o *operator) restart(now time.Time) {
	n := len(o.w.sites)
	o.up, o.started, o.lastD = true, now, ""
	o.mem = memory{deb: make([]*topology.Debouncer, n), last: make([]SiteStatus, n), fresh: make([]bool, n),
		lastContact: make([]time.Time, n), safeAt: make([]time.Time, n), genSeen: make([]int64, n), genSeenAt: make([]time.Time, n)}
	for i := range n {
		d, err := topology.NewDebouncer(o.w.cfg.FailureThreshold, o.w.cfg.RecoveryThreshold)
		if err != nil {
			panic(fmt.Sprintf("config validated but %v", err))
		}
		o.mem.deb[i] = d
	}
}

// serve answers a sidecar's GET /active-site.
func (o *operator) serve(i int, now time.Time) View {
	o.mem.lastContact[i] = now
	o.sawGeneration(i, now, max(o.st.Generation, o.mem.genSeen[i]))
	return View{Active: o.st.ActiveSite, Generation: o.st.Generation, ObservedAt: now}
}

// sawGeneration records that site i's sidecar holds generation g at now. A
// lower generation than before, or a Pod started since the last record (as
// Kubernetes shows it), means a new sidecar: the record starts over.
func (o *operator) sawGeneration(i int, now time.Time, g int64) {
	if g != o.mem.genSeen[i] || o.mem.genSeenAt[i].Before(o.w.sites[i].startedAt) {
		o.mem.genSeen[i], o.mem.genSeenAt[i] = g, now
	}
}

// cycle is one poll: observe, decide, act.
func (o *operator) cycle(now time.Time) {
	o.observe(now)
	o.confirmFences(now)
	o.markDivergence()
	in := o.input(now)
	d, err := topology.Decide(in)
	if err != nil {
		o.w.check.violate("decide-error", err.Error())
		return
	}
	o.w.check.divergenceReport(d)
	if s := d.String(); s != o.lastD {
		o.w.logf("decide %s (%s)", s, d.Message)
		o.lastD = s
	}
	o.act(now, d, in)
}

func (o *operator) observe(now time.Time) {
	for i, s := range o.w.sites {
		st, err := o.ops.raw.Status(s.name)
		o.mem.fresh[i] = err == nil
		probe := topology.ProbeFailed
		switch {
		case err == nil:
			o.mem.last[i] = st
			probe = topology.ProbeWritable
			if st.ReadOnly {
				probe, o.mem.safeAt[i] = topology.ProbeReadOnly, now
			}
		case errors.Is(err, ErrMySQLDown):
			o.mem.safeAt[i] = now
		}
		if err == nil || errors.Is(err, ErrMySQLDown) {
			o.mem.lastContact[i] = now
			o.sawGeneration(i, now, st.SidecarGeneration)
		}
		if _, changed, _ := o.mem.deb[i].Observe(now, probe); changed {
			o.w.logf("operator sees %s %s", s.name, o.mem.deb[i].State())
		}
	}
}

// confirmFences clears MayBeWritable on every site the confirmer clears.
func (o *operator) confirmFences(now time.Time) {
	for i := range o.st.Sites {
		rec := &o.st.Sites[i]
		if !rec.MayBeWritable {
			continue
		}
		if ok, by := o.w.cfg.Confirmer.Confirm(o.evidence(i, now)); ok {
			rec.MayBeWritable = false
			if o.st.Intent != nil && o.st.Intent.From == rec.Name {
				o.st.Intent.ConfirmedBy = by
			}
			o.w.logf("operator confirms %s cannot write (%s)", rec.Name, by)
		}
	}
}

func (o *operator) evidence(i int, now time.Time) Evidence {
	s := o.w.sites[i]
	ev := Evidence{Site: s.name, Now: now, Active: o.st.ActiveSite, Generation: o.st.Generation,
		UnfencedAt: o.st.Sites[i].UnfencedAt, ObservedSafeAt: o.mem.safeAt[i],
		LastContact: o.mem.lastContact[i], PodGone: !s.pod,
		LeaseTimeout: o.w.cfg.LeaseTimeout, PeerCheckInterval: o.w.cfg.PeerCheckInterval}
	if since, failing := o.mem.deb[i].FailingSince(); failing {
		ev.FailingSince = since
	}
	if ev.LastContact.Before(o.started) {
		ev.LastContact = o.started
	}
	for j, p := range o.w.sites {
		if j != i {
			ev.Peers = append(ev.Peers, PeerAdoption{Site: p.name, PodGone: !p.pod, GoneAt: p.goneAt,
				Adopted: o.mem.genSeen[j] >= o.st.Generation && !o.mem.genSeenAt[j].Before(p.startedAt),
				At:      o.mem.genSeenAt[j]})
		}
	}
	return ev
}

// markDivergence records errant transactions on any reachable site. The
// reference is the active site's own set when it heads the history (no
// failover in flight) and was just read; otherwise the history's head as far
// as the operator knows it: the set the last promoted site held when it was
// promoted, plus anything its own server wrote since.
func (o *operator) markDivergence() {
	if o.w.cfg.Break&BreakRejoinCheck != 0 {
		return
	}
	a := o.activeIdx()
	ref := o.st.PromotionExecuted.Union(gtid.MustParseSet(fmt.Sprintf("%s:1-%d", o.st.ActiveSourceID, uint64(gtid.MaxSeq))))
	if o.st.Intent == nil && !o.st.Planned.Guard() && o.mem.fresh[a] {
		ref = o.mem.last[a].Executed
	}
	for i := range o.w.sites {
		rec := &o.st.Sites[i]
		if !o.mem.fresh[i] || !rec.Divergent.IsEmpty() {
			continue
		}
		if errant := gtid.Errant(o.mem.last[i].Executed, ref); !errant.IsEmpty() {
			rec.Divergent = errant
			o.w.logf("operator marks %s diverged: %s", rec.Name, errant)
		}
	}
}

func (o *operator) activeIdx() int {
	s, _ := o.w.siteByName(o.st.ActiveSite)
	return s.idx
}

func (o *operator) input(now time.Time) topology.Input {
	in := topology.Input{ActiveSite: o.st.ActiveSite, Generation: o.st.Generation, History: o.st.History,
		Promoted:        o.st.PromotionExecuted,
		PlannedInFlight: o.st.Planned.Guard(), Cooldown: o.w.cfg.Cooldown, MaxLag: maxLag, Now: now}
	if it := o.st.Intent; it != nil {
		in.InFlight = &topology.Intent{From: it.From, To: it.To, Generation: it.Generation, Step: it.Step}
	}
	for i, s := range o.w.sites {
		rec, last := o.st.Sites[i], o.mem.last[i]
		in.Sites = append(in.Sites, topology.SiteView{Name: s.name, Role: s.role, State: o.mem.deb[i].State(),
			Executed: last.Executed, Replication: topology.Replication{Running: last.Replicating, Lag: last.Lag},
			Stale: !o.mem.fresh[i], ServerID: last.ServerUUID,
			AdminFenced: rec.AdminFenced, Diverged: !rec.Divergent.IsEmpty(), FenceConfirmed: !rec.MayBeWritable})
	}
	return in
}
