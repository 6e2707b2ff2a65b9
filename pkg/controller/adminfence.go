package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Administrator fencing: the group's fenced-sites annotation
// (v1alpha1.FencedSitesAnnotation) names sites an administrator took out of
// service. The loop marks their SiteViews AdminFenced, so Decide never
// promotes nor re-asserts them. A fenced active site that still writes is
// fenced by SQL (the ordinary fence verb) and the group waits, not Ready,
// until the annotation no longer names it; then the ordinary re-assertion
// makes it writable again. No other site is promoted because of the fence.

// parseFencedSites reads the annotation's value: site names separated by
// commas, nothing trimmed or case-folded. It returns the named sites of the
// group and, in order, the entries that name none (empty entries included).
// An empty value fences nothing.
func parseFencedSites(value string, sites []v1alpha1.Site) (map[string]bool, []string) {
	fenced := map[string]bool{}
	if value == "" {
		return fenced, nil
	}
	var ignored []string
	for entry := range strings.SplitSeq(value, ",") {
		known := slices.ContainsFunc(sites, func(s v1alpha1.Site) bool { return s.Name == entry })
		if !known {
			ignored = append(ignored, entry)
			continue
		}
		fenced[entry] = true
	}
	return fenced, ignored
}

// markAdminFenced sets AdminFenced on the views of the fenced sites.
func markAdminFenced(views []topology.SiteView, fenced map[string]bool) {
	for i := range views {
		views[i].AdminFenced = fenced[views[i].Name]
	}
}

// adminFence marks the pass's site views from g's annotation, and warns
// once per distinct value about entries that name no site of the group.
func (l *groupLoop) adminFence(g *v1alpha1.MysqlFailoverGroup, in *topology.Input) {
	fenced, ignored := parseFencedSites(g.Annotations[v1alpha1.FencedSitesAnnotation], g.Spec.Sites)
	markAdminFenced(in.Sites, fenced)
	if len(ignored) == 0 {
		l.op.notifier.clearOnChange(g, v1alpha1.EventFencedSitesIgnored)
		return
	}
	quoted := make([]string, len(ignored))
	for i, e := range ignored {
		quoted[i] = strconv.Quote(e)
	}
	l.op.notifier.EventOnChange(g, failover.EventWarning, v1alpha1.EventFencedSitesIgnored,
		fmt.Sprintf("annotation %s: %s name no site of the group; ignored", v1alpha1.FencedSitesAnnotation,
			strings.Join(quoted, ", ")))
}

// adminFenceDecision replaces a Healthy or Degraded decision whose active
// site is admin-fenced and still writable: the active site is to be fenced
// (Fence) and the group reports the re-assertion blocked by the fence. Any
// other decision is returned as is: once the site is read-only, Decide
// itself blocks its re-assertion with ReasonAdminFenced.
func adminFenceDecision(in topology.Input, d topology.Decision) topology.Decision {
	if d.Kind != topology.KindHealthy && d.Kind != topology.KindDegraded {
		return d
	}
	if in.ActiveSite == "" || in.InFlight != nil || in.PlannedInFlight {
		return d
	}
	a, ok := in.Site(in.ActiveSite)
	if !ok || !a.AdminFenced || a.State != v1alpha1.StateWritable {
		return d
	}
	return topology.Decision{Kind: topology.KindFailoverBlocked, Reason: v1alpha1.ReasonAdminFenced,
		Wanted: topology.KindNoPrimary, Active: d.Active, Target: a.Name, Fence: []string{a.Name},
		Message: fmt.Sprintf("active site %s is fenced by an administrator (%s): it is made read-only and no other site is promoted",
			a.Name, v1alpha1.FencedSitesAnnotation)}
}

// isAdminFence reports whether d is adminFenceDecision's fence of the active site.
func isAdminFence(d topology.Decision) bool {
	return d.Kind == topology.KindFailoverBlocked && d.Reason == v1alpha1.ReasonAdminFenced && len(d.Fence) > 0
}

// adminFenceAct fences the admin-fenced active site by SQL when the pass's
// decision says so, and reports whether it was the pass's operation. The
// site is marked held read-only only when the fence succeeded.
func (l *groupLoop) adminFenceAct(ctx context.Context, p failover.Pass) bool {
	d := p.Decision
	if !isAdminFence(d) {
		return false
	}
	g := p.Group
	for _, site := range d.Fence {
		cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
		err := l.conns.Fence(cctx, site)
		cancel()
		if err != nil {
			l.log.Error(fmt.Errorf("admin fence: %w", err), "act", "decision", d.String())
			continue
		}
		failover.RecordFenced(&g.Status, site)
		l.op.notifier.Event(g, failover.EventNormal, v1alpha1.EventAdminFenced,
			fmt.Sprintf("active site %s fenced by SQL: the %s annotation names it; no other site is promoted, "+
				"remove it from the annotation to make it writable again", site, v1alpha1.FencedSitesAnnotation))
	}
	return true
}
