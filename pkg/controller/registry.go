package controller

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// Registry holds what /active-site publishes (each group's persisted view)
// and what sidecars reported through it: the evidence the fence-confirmation
// rule reads. It lives only in memory: a restarted operator starts with no
// reports, which the rule accounts for (last contact = operator start).
type Registry struct {
	now     func() time.Time
	started time.Time

	mu    sync.Mutex
	views map[types.NamespacedName]published
	side  map[siteKey]*sidecarRecord
}

type published struct {
	view  v1alpha1.ActiveSiteView
	sites []string
}

type siteKey struct {
	group types.NamespacedName
	site  string
}

// sidecarRecord is one site's sidecar as this operator knows it.
type sidecarRecord struct {
	report      *failover.Report
	lastServed  time.Time // last view served to it: its lease was renewed then
	servedGen   int64     // highest generation served to it
	servedGenAt time.Time // when servedGen was first served
}

// NewRegistry returns an empty Registry reading time from now.
func NewRegistry(now func() time.Time) *Registry {
	return &Registry{now: now, started: now(), views: map[types.NamespacedName]published{},
		side: map[siteKey]*sidecarRecord{}}
}

// Started is when the Registry (the operator) started.
func (r *Registry) Started() time.Time { return r.started }

// Publish implements failover.Publisher: /active-site serves g's persisted
// activeSite and topologyGeneration from now on.
func (r *Registry) Publish(g *v1alpha1.MysqlFailoverGroup) {
	if g.Status.ActiveSite == "" {
		return
	}
	key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
	sites := make([]string, 0, len(g.Spec.Sites))
	for _, s := range g.Spec.Sites {
		sites = append(sites, s.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views[key] = published{sites: sites, view: v1alpha1.ActiveSiteView{Namespace: g.Namespace, Group: g.Name,
		ActiveSite: g.Status.ActiveSite, Generation: g.Status.TopologyGeneration, Source: v1alpha1.SourceOperator}}
}

// Forget drops a deleted group.
func (r *Registry) Forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.views, key)
	for k := range r.side {
		if k.group == key {
			delete(r.side, k)
		}
	}
}

// View returns the published view of a group and its site names.
func (r *Registry) View(key types.NamespacedName) (v1alpha1.ActiveSiteView, []string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.views[key]
	return p.view, p.sites, ok
}

// Serve records that site's sidecar (empty: an anonymous caller) is being
// served view now, with its report when it sent one, and returns the view
// stamped with the time.
func (r *Registry) Serve(view v1alpha1.ActiveSiteView, site string, rep *failover.Report) v1alpha1.ActiveSiteView {
	now := r.now()
	view.ObservedAt = now
	if site == "" {
		return view
	}
	key := siteKey{group: types.NamespacedName{Namespace: view.Namespace, Name: view.Group}, site: site}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.side[key]
	if rec == nil {
		rec = &sidecarRecord{}
		r.side[key] = rec
	}
	if rep != nil {
		rep.At = now
		rec.report = rep
	}
	rec.lastServed = now
	if view.Generation > rec.servedGen {
		rec.servedGen, rec.servedGenAt = view.Generation, now
	}
	return view
}

// sidecarView is a copy of one site's record.
type sidecarView struct {
	sidecarRecord
	known bool
}

func (r *Registry) sidecar(group types.NamespacedName, site string) sidecarView {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.side[siteKey{group: group, site: site}]
	if !ok {
		return sidecarView{}
	}
	out := sidecarView{sidecarRecord: *rec, known: true}
	if rec.report != nil {
		rep := *rec.report
		out.report = &rep
	}
	return out
}

// Generation is the generation site's sidecar holds as far as this operator
// knows (the highest it reported or was served), and whether that sidecar
// is live: it asked within leaseTimeout.
func (r *Registry) Generation(group types.NamespacedName, site string, leaseTimeout time.Duration) (int64, bool) {
	sv := r.sidecar(group, site)
	if !sv.known {
		return 0, false
	}
	gen := sv.servedGen
	if sv.report != nil {
		gen = max(gen, sv.report.Generation)
	}
	return gen, r.now().Sub(sv.lastServed) <= leaseTimeout
}

// siteNames lists a group's sites in spec order.
func siteNames(g *v1alpha1.MysqlFailoverGroup) []string {
	out := make([]string, 0, len(g.Spec.Sites))
	for _, s := range g.Spec.Sites {
		out = append(out, s.Name)
	}
	return out
}

func hasSite(sites []string, site string) bool { return slices.Contains(sites, site) }
