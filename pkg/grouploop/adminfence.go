package grouploop

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
// service. The loop marks their SiteViews AdminFenced; the rule is
// topology's (adminfence.go there): Decide never promotes nor re-asserts
// them, and asks (Decision.AdminFence) for a fenced active site that still
// writes to be fenced by SQL, which adminFenceAct does with the ordinary
// fence verb. The group waits, not Ready, until the annotation no longer
// names it; then the ordinary re-assertion makes it writable again.

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
func (l *Loop) adminFence(g *v1alpha1.MysqlFailoverGroup, in *topology.Input) {
	fenced, ignored := parseFencedSites(g.Annotations[v1alpha1.FencedSitesAnnotation], g.Spec.Sites)
	markAdminFenced(in.Sites, fenced)
	if len(ignored) == 0 {
		l.env.Notifier.clearOnChange(g, v1alpha1.EventFencedSitesIgnored)
		return
	}
	quoted := make([]string, len(ignored))
	for i, e := range ignored {
		quoted[i] = strconv.Quote(e)
	}
	l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.EventFencedSitesIgnored,
		fmt.Sprintf("annotation %s: %s name no site of the group; ignored", v1alpha1.FencedSitesAnnotation,
			strings.Join(quoted, ", ")))
}

// adminFenceAct fences the admin-fenced active site by SQL when the pass's
// decision says so, and reports whether it was the pass's operation. The
// site is marked held read-only only when the fence succeeded.
func (l *Loop) adminFenceAct(ctx context.Context, p failover.Pass) bool {
	d := p.Decision
	if !d.AdminFence {
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
		l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventAdminFenced,
			fmt.Sprintf("active site %s fenced by SQL: the %s annotation names it; no other site is promoted, "+
				"remove it from the annotation to make it writable again", site, v1alpha1.FencedSitesAnnotation))
	}
	return true
}
