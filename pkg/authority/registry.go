package authority

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Registry holds what /active-site publishes (each group's persisted view)
// and what sidecars reported through it: the evidence the fence-confirmation
// rule reads. It lives only in memory: a restarted operator starts with no
// reports, which the rule accounts for (last contact = operator start).
type Registry struct {
	now     func() time.Time
	started time.Time
	// operator is this process's id, random per start: the Operator of every
	// view it serves, which sidecars echo in their reports.
	operator string
	// signer signs every view served; nil until the signing key is loaded.
	signer atomic.Pointer[protocol.Signer]
	// seq is the Seq of the last view served (registry_seq.go).
	seq atomic.Int64

	mu    sync.Mutex
	views map[types.NamespacedName]published
	side  map[siteKey]*sidecarRecord
	// known are each group's sites as its loop last read them (know).
	known map[types.NamespacedName][]string
	// onPublish, when set, hears every view published (the Nudger, nudge.go).
	onPublish func(v1alpha1.ActiveSiteView, []string)
	// onAdopt, when set, hears every group one of whose sidecars was just
	// served a higher generation than one served to it before (adoptwake.go).
	onAdopt func(types.NamespacedName)
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
	report     *topology.Report
	lastServed time.Time // last view served to it: its lease was renewed then
	servedGen  int64     // highest generation served to it
	// held is the current run of reports at one generation from one
	// sidecar process: the sidecar reported heldGen in every report since
	// heldSince, with boot id heldBoot. A run ends when the reported
	// generation or boot id changes, or when a Pod listing shows that the
	// site's sidecar may be another process than the one that began the run
	// (SawPods). Only the operator's clock times a run.
	held      bool
	heldGen   int64
	heldSince time.Time
	heldBoot  string
	// pods are the site's Pods in the last listing, by UID, each with its
	// sidecar container as that listing showed it; podSeen is true once a
	// listing showed one; podGoneAt is the last listing that missed a Pod
	// listed before.
	pods      map[types.UID]sidecarContainer
	podSeen   bool
	podGoneAt time.Time
}

// sidecarContainer is a Pod's sidecar container as one listing showed it:
// its restartCount and its running.startedAt (zero when not running). The
// start is the kubelet's time, only ever compared with itself.
type sidecarContainer struct {
	restarts int32
	started  time.Time
}

// PodRef is one Pod of a site as a listing shows it.
type PodRef struct {
	UID types.UID
	// SidecarRestarts is the sidecar container's restartCount and
	// SidecarStarted its running.startedAt (zero when not running).
	SidecarRestarts int32
	SidecarStarted  time.Time
}

// NewRegistry returns an empty Registry reading time from now.
func NewRegistry(now func() time.Time) *Registry {
	return &Registry{now: now, started: now(), operator: newOperatorID(), views: map[types.NamespacedName]published{},
		side: map[siteKey]*sidecarRecord{}, known: map[types.NamespacedName][]string{}}
}

// newOperatorID is a random id for this operator process.
func newOperatorID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// OperatorID is this operator process's id, the Operator of its views.
func (r *Registry) OperatorID() string { return r.operator }

// SetSigner makes s sign every view served from now on.
func (r *Registry) SetSigner(s *protocol.Signer) { r.signer.Store(s) }

// Signer is the current signer, nil before the key is loaded.
func (r *Registry) Signer() *protocol.Signer { return r.signer.Load() }

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
	if r.onPublish != nil {
		r.onPublish(r.views[key].view, sites) // after the view is served: a nudged sidecar fetches it
	}
}

// Forget drops a deleted group.
func (r *Registry) Forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.views, key)
	delete(r.known, key)
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
// stamped with the time and this process's id (not yet signed).
func (r *Registry) Serve(view v1alpha1.ActiveSiteView, site string, rep *topology.Report) v1alpha1.ActiveSiteView {
	now := r.now()
	view.ObservedAt, view.Operator, view.Seq = now, r.operator, r.seq.Add(1)
	if site == "" {
		return view
	}
	key := siteKey{group: types.NamespacedName{Namespace: view.Namespace, Name: view.Group}, site: site}
	r.mu.Lock()
	rec := r.record(key)
	if rep != nil {
		rep.At = now
		rec.report = rep
		if !rec.held || rep.Generation != rec.heldGen || rep.Boot != rec.heldBoot {
			rec.held, rec.heldGen, rec.heldSince, rec.heldBoot = true, rep.Generation, now, rep.Boot
		}
	}
	rec.lastServed = now
	// The first view served after this process started is no adoption:
	// no step of this process waits for it.
	adopted := rec.servedGen > 0 && view.Generation > rec.servedGen
	rec.servedGen = max(rec.servedGen, view.Generation)
	hook := r.onAdopt
	r.mu.Unlock()
	if adopted && hook != nil {
		hook(key.group)
	}
	return view
}

// record is key's record, made when missing; r.mu must be held.
func (r *Registry) record(key siteKey) *sidecarRecord {
	rec := r.side[key]
	if rec == nil {
		rec = &sidecarRecord{}
		r.side[key] = rec
	}
	return rec
}

// SawPods records a listing of site's Pods, made now. A Pod listed before
// and missing now was seen gone now. The current run of reports ends when
// the listing may show another sidecar process than the one that began
// it, which may not have heard the operator:
//   - a Pod UID the previous listing did not show (the first listing too);
//   - a Pod whose sidecar container's restart count or start differs from
//     the previous listing's (it restarted, or is not running now).
//
// Nothing here compares the API server's or a kubelet's times with the
// operator's clock: a listing is compared only with the previous one, so
// no clock skew hides a restart. Ending a run is always safe: it only
// delays the old primary's lease deadline until the new process reports
// (Serve starts a run again, and a new boot id ends one there too).
func (r *Registry) SawPods(group types.NamespacedName, site string, pods []PodRef) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.record(siteKey{group: group, site: site})
	cur := make(map[types.UID]sidecarContainer, len(pods))
	for _, p := range pods {
		sc := sidecarContainer{restarts: p.SidecarRestarts, started: p.SidecarStarted}
		cur[p.UID] = sc
		if prev, known := rec.pods[p.UID]; !known || prev.restarts != sc.restarts || !prev.started.Equal(sc.started) {
			rec.held = false
		}
	}
	for uid := range rec.pods {
		if _, ok := cur[uid]; !ok {
			rec.podGoneAt = now
		}
	}
	rec.pods, rec.podSeen = cur, rec.podSeen || len(pods) > 0
}

// SidecarView is a copy of one site's record.
type SidecarView struct {
	sidecarRecord
	known    bool
	podCount int // Pods in the last listing
}

// Report is the sidecar's last report, nil when it sent none.
func (sv SidecarView) Report() *topology.Report { return sv.report }

// LastServed is when this operator last served the sidecar a view: its
// lease was renewed then.
func (sv SidecarView) LastServed() time.Time { return sv.lastServed }

// Pods is how many Pods of the site the last listing showed.
func (sv SidecarView) Pods() int { return sv.podCount }

// Peer is what the fence-confirmation rule needs of this sidecar, as a peer
// of another site while generation gen is published. stopped is since when
// (this operator's clock) the kubelets of the site's gone Pods have stopped
// their containers (grouploop's Loop.stoppedAt; zero when not, or when this pass
// did not list the Pods): a Pod gone from the API may still run a sidecar
// that serves views, so the site counts as gone, and serves nothing, only
// from then on.
//
// A report of the site's newest sidecar counts as adoption only while the
// site runs at most one Pod and no Pod of it that went away is still unproven
// stopped (pending): a replaced Pod may still run, force-deleted or
// stuck on a partitioned node, and relay the old view. It counts from the
// later of the report and the last proof (proven).
func (sv SidecarView) Peer(site string, gen int64, stopped, proven time.Time, pending bool) topology.PeerAdoption {
	p := topology.PeerAdoption{Site: site, GoneAt: sv.podGoneAt,
		Adopted: sv.held && sv.heldGen >= gen && sv.podCount <= 1 && !pending, At: later(sv.heldSince, proven)}
	if sv.podSeen && sv.podCount == 0 && !stopped.IsZero() && !pending {
		p.PodGone, p.GoneAt = true, stopped
	}
	return p
}

// Sidecar is a copy of what this operator knows of site's sidecar.
func (r *Registry) Sidecar(group types.NamespacedName, site string) SidecarView {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.side[siteKey{group: group, site: site}]
	if !ok {
		return SidecarView{}
	}
	out := SidecarView{sidecarRecord: *rec, known: true}
	out.pods = nil // the listing is the registry's; a copy needs only its size
	out.podCount = len(rec.pods)
	if rec.report != nil {
		rep := *rec.report
		out.report = &rep
	}
	return out
}

// Generation is the generation site's sidecar holds as far as this operator
// knows: the one it last reported holding (0 before any report), and
// whether that sidecar is live: it asked within leaseTimeout. A generation
// served to it is not one it holds: it adopts a view, and writes its
// active record for a view naming its own site, only after the answer
// arrives, and may die or be cut off before. A report says it did.
func (r *Registry) Generation(group types.NamespacedName, site string, leaseTimeout time.Duration) (int64, bool) {
	sv := r.Sidecar(group, site)
	if !sv.known {
		return 0, false
	}
	var gen int64
	if sv.report != nil {
		gen = sv.report.Generation
	}
	return gen, r.now().Sub(sv.lastServed) <= leaseTimeout
}

func hasSite(sites []string, site string) bool { return slices.Contains(sites, site) }

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
