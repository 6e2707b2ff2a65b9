package topology

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A site whose Deployment was edited by hand (its hash still says current,
// its spec says otherwise) is rolled back by the same ordered update as a
// stale site, and named.
func TestPlanRolloutDrift(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	drifted := func(s RolloutSite) RolloutSite { s.Drifted = true; return s }
	stale := func(s RolloutSite) RolloutSite { s.Stale = true; return s }
	down := func(s RolloutSite) RolloutSite {
		s.PodReady, s.View.State = false, v1alpha1.StateUnreachable
		return s
	}
	fenced := func(s RolloutSite) RolloutSite { s.View.AdminFenced = true; return s }
	in := func(sites ...RolloutSite) RolloutInput {
		return RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Sites: sites, Decision: KindHealthy,
			MaxLag: 30 * time.Second, PeerCheckInterval: 2 * time.Second, Now: now}
	}
	tests := []struct {
		name    string
		in      RolloutInput
		action  RolloutAction
		site    string
		target  string
		drifted []string
		message string
	}{
		{"a drifted replica is rolled back", in(back("iad"), drifted(back("pdx")), back("fra")),
			RolloutUpdate, "pdx", "", []string{"pdx"}, "changed outside the operator, rolled back in order: pdx"},
		{"a drifted replica whose Pod is down (scaled to zero) goes first",
			in(back("iad"), stale(back("pdx")), drifted(down(back("fra")))),
			RolloutUpdate, "fra", "", []string{"fra"}, "updating fra"},
		{"a drifted replica waits for the others to be back",
			in(back("iad"), drifted(back("pdx")), down(back("fra"))),
			RolloutWait, "", "", []string{"pdx"}, "waiting for fra"},
		{"a drifted primary is switched over first, never restarted in place",
			in(drifted(back("iad")), back("pdx")),
			RolloutSwitchover, "iad", "pdx", []string{"iad"}, "switching the primary iad over to pdx"},
		{"a drifted replica is not a switchover target",
			in(stale(back("iad")), drifted(back("pdx")), back("fra")),
			RolloutUpdate, "pdx", "", []string{"pdx"}, ""},
		{"a drifted fenced site is left alone and named as skipped",
			in(back("iad"), fenced(drifted(back("pdx")))),
			RolloutIdle, "", "", nil, "not updated (fenced or diverged): pdx"},
		{"no drift: idle", in(back("iad"), back("pdx")), RolloutIdle, "", "", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sites := slices.Clone(tc.in.Sites)
			got := PlanRollout(tc.in)
			if got.Action != tc.action || got.Site != tc.site || (tc.target != "" && got.Target != tc.target) ||
				!slices.Equal(got.Drifted, tc.drifted) {
				t.Fatalf("got %+v, want %s site %q target %q drifted %v", got, tc.action, tc.site, tc.target, tc.drifted)
			}
			if !strings.Contains(got.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", got.Message, tc.message)
			}
			if !slices.EqualFunc(sites, tc.in.Sites, func(a, b RolloutSite) bool { return a.Stale == b.Stale }) {
				t.Errorf("PlanRollout changed its input's sites")
			}
		})
	}
}
