package authority

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// MaxReported is the highest generation this operator knows one of sites'
// sidecars to hold: what each last reported, and what this operator served
// it. Neither can exceed the persisted generation unless status went back.
func (r *Registry) MaxReported(group types.NamespacedName, sites []string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out int64
	for _, site := range sites {
		rec := r.side[siteKey{group: group, site: site}]
		if rec == nil {
			continue
		}
		out = max(out, rec.servedGen)
		if rec.report != nil {
			out = max(out, rec.report.Generation)
		}
	}
	return out
}

// ReportedAll reports whether every one of sites' sidecars reported to
// this operator since it started.
func (r *Registry) ReportedAll(group types.NamespacedName, sites []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, site := range sites {
		if rec := r.side[siteKey{group: group, site: site}]; rec == nil || rec.report == nil {
			return false
		}
	}
	return true
}

// noteReport records a sidecar's report that arrived while the group had
// no view to serve (no active site): nothing is served, so no lease is
// renewed, but the generation it holds is known.
func (r *Registry) noteReport(group types.NamespacedName, site string, rep topology.Report) {
	rep.At = r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record(siteKey{group: group, site: site}).report = &rep
}

// Know records a group's site names from its loop's latest read, before
// anything is published, so a report that arrives while the group has no
// view can be checked against them (API.activeSite).
func (r *Registry) Know(group types.NamespacedName, sites []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known[group] = sites
}

// Knows reports whether the group's loop has read it (Know) since this
// process started, and it was not forgotten since: the operator's
// readiness waits for every group (controller health.go).
func (r *Registry) Knows(group types.NamespacedName) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.known[group]
	return ok
}

func (r *Registry) knownSites(group types.NamespacedName) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.known[group]
}
