package grouploop

import (
	"maps"
	"slices"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

func TestParseFencedSites(t *testing.T) {
	sites := []v1alpha1.Site{{Name: "iad"}, {Name: "pdx"}, {Name: "fra"}}
	for _, tc := range []struct {
		value   string
		fenced  []string
		ignored []string
	}{
		{"", nil, nil},
		{"pdx", []string{"pdx"}, nil},
		{"pdx,fra", []string{"fra", "pdx"}, nil},
		{"pdx,pdx", []string{"pdx"}, nil},
		{"sfo", nil, []string{"sfo"}},
		{"pdx,sfo", []string{"pdx"}, []string{"sfo"}},
		{"PDX", nil, []string{"PDX"}},
		{" pdx", nil, []string{" pdx"}},
		{"pdx,", []string{"pdx"}, []string{""}},
		{",", nil, []string{"", ""}},
		{"pdx:maxLagWait=30s", nil, []string{"pdx:maxLagWait=30s"}},
	} {
		fenced, ignored := parseFencedSites(tc.value, sites)
		got := slices.Sorted(maps.Keys(fenced))
		if !slices.Equal(got, tc.fenced) || !slices.Equal(ignored, tc.ignored) {
			t.Errorf("parseFencedSites(%q) = %v, ignored %q; want %v, ignored %q", tc.value, got, ignored, tc.fenced, tc.ignored)
		}
	}
}

// views are three primary-candidate sites: iad (active) in state active,
// pdx and fra read-only.
func views(active v1alpha1.SiteState) []topology.SiteView {
	return []topology.SiteView{
		{Name: "iad", State: active, FenceConfirmed: active == v1alpha1.StateUnreachable},
		{Name: "pdx", State: v1alpha1.StateReadOnly, Replication: topology.Replication{Running: true}},
		{Name: "fra", State: v1alpha1.StateReadOnly, Replication: topology.Replication{Running: true}},
	}
}

// The marked views go through the real Decide: an admin-fenced site is
// never the candidate, and a fenced active site is frozen, not replaced.
func TestAdminFencedSiteViews(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sites   int
		active  v1alpha1.SiteState
		fenced  string
		kind    topology.Kind
		reason  string
		target  string
		fence   []string
		marked  []string
		wantedK topology.Kind
	}{
		{name: "unfenced: failover to pdx, the first in priority", sites: 3, active: v1alpha1.StateUnreachable,
			kind: topology.KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "pdx"},
		{name: "pdx fenced: failover to fra", sites: 3, active: v1alpha1.StateUnreachable, fenced: "pdx",
			kind: topology.KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "fra", marked: []string{"pdx"}},
		{name: "two sites, pdx fenced: no candidate", sites: 2, active: v1alpha1.StateUnreachable, fenced: "pdx",
			kind: topology.KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, marked: []string{"pdx"},
			wantedK: topology.KindFailover},
		{name: "every replica fenced: no candidate", sites: 3, active: v1alpha1.StateUnreachable, fenced: "fra,pdx",
			kind: topology.KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, marked: []string{"pdx", "fra"},
			wantedK: topology.KindFailover},
		{name: "active writable and fenced: fence it, promote nobody", sites: 3, active: v1alpha1.StateWritable,
			fenced: "iad", kind: topology.KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "iad",
			fence: []string{"iad"}, marked: []string{"iad"}, wantedK: topology.KindNoPrimary},
		{name: "active read-only and fenced: stays frozen", sites: 3, active: v1alpha1.StateReadOnly,
			fenced: "iad", kind: topology.KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "iad",
			marked: []string{"iad"}, wantedK: topology.KindNoPrimary},
		{name: "active read-only, unfenced: re-asserted", sites: 3, active: v1alpha1.StateReadOnly,
			kind: topology.KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "iad"},
		{name: "a replica fenced while healthy: nothing to do", sites: 2, active: v1alpha1.StateWritable,
			fenced: "pdx", kind: topology.KindHealthy, reason: v1alpha1.ReasonHealthy, marked: []string{"pdx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := topology.Input{Sites: views(tc.active)[:tc.sites], ActiveSite: "iad", Generation: 1}
			var spec []v1alpha1.Site
			for _, v := range in.Sites {
				spec = append(spec, v1alpha1.Site{Name: v.Name})
			}
			fenced, _ := parseFencedSites(tc.fenced, spec)
			markAdminFenced(in.Sites, fenced)
			var marked []string
			for _, v := range in.Sites {
				if v.AdminFenced {
					marked = append(marked, v.Name)
				}
			}
			if !slices.Equal(marked, tc.marked) {
				t.Fatalf("marked %v, want %v", marked, tc.marked)
			}
			d, err := topology.Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != tc.kind || d.Reason != tc.reason || d.Target != tc.target || !slices.Equal(d.Fence, tc.fence) ||
				d.Wanted != tc.wantedK {
				t.Fatalf("decision %s, want %s/%s target=%s fence=%v wanted=%s", d, tc.kind, tc.reason, tc.target, tc.fence, tc.wantedK)
			}
			if d.AdminFence != (len(tc.fence) > 0) {
				t.Fatalf("%s: AdminFence = %v", d, d.AdminFence)
			}
		})
	}
}
