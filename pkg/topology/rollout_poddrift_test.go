package topology

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A site whose Pod had an image changed on the Pod itself (its Deployment
// current and rolled out) is set back through the ordered update: setting
// the image back restarts that container, so it waits for every other
// site to be back, and the primary is switched over first.
func TestPlanRolloutPodDrift(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	pod := func(s RolloutSite) RolloutSite { s.PodDrifted = true; return s }
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
	restart := func(i RolloutInput) RolloutInput { i.Method = v1alpha1.UpdateRestart; return i }
	tests := []struct {
		name      string
		in        RolloutInput
		action    RolloutAction
		site      string
		podRepair bool
		named     []string
		message   string
	}{
		{"a replica's Pod edited: its images set back", in(back("iad"), pod(back("pdx")), back("fra")),
			RolloutUpdate, "pdx", true, []string{"pdx"}, "Pod images changed on the Pod, set back in order: pdx"},
		{"a replica's Pod edited while another site is down: wait",
			in(back("iad"), pod(back("pdx")), down(back("fra"))), RolloutWait, "", false, []string{"pdx"}, "waiting for fra"},
		{"the primary's Pod edited: switched over first",
			in(pod(back("iad")), back("pdx")), RolloutSwitchover, "iad", false, []string{"iad"}, "switching the primary iad"},
		{"the primary's Pod edited, method restart: set back in place",
			restart(in(pod(back("iad")), back("pdx"))), RolloutUpdate, "iad", true, []string{"iad"}, "restarting the primary"},
		{"a stale Deployment whose Pod was edited too: the Deployment is applied (it replaces the Pod)",
			in(back("iad"), pod(stale(back("pdx")))), RolloutUpdate, "pdx", false, nil, "updating pdx"},
		{"a fenced site's Pod edited: left alone", in(back("iad"), fenced(pod(back("pdx")))),
			RolloutIdle, "", false, nil, "not updated (fenced or diverged): pdx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanRollout(tc.in)
			if got.Action != tc.action || got.Site != tc.site || got.PodRepair != tc.podRepair ||
				!slices.Equal(got.PodDrifted, tc.named) {
				t.Fatalf("got %+v, want %s site %q podRepair %v named %v", got, tc.action, tc.site, tc.podRepair, tc.named)
			}
			if !strings.Contains(got.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", got.Message, tc.message)
			}
		})
	}
}
