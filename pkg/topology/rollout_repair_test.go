package topology

import (
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A change of a site's Deployment that leaves its Pod template and replica
// count as they are (only the strategy, the revision history or the
// Deployment's own metadata) replaces no Pod: it is repaired at once, takes
// no turn in the order, begins no update and, on the primary, costs no
// switchover.
func TestPlanRolloutRepairInPlace(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	stale := func(s RolloutSite) RolloutSite { s.Stale = true; return s }
	drifted := func(s RolloutSite) RolloutSite { s.Drifted = true; return s }
	keeps := func(s RolloutSite) RolloutSite { s.KeepsPods = true; return s }
	strategy := func(s RolloutSite) RolloutSite { s.Drifted, s.StrategyDrifted = true, true; return s }
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
		phase   v1alpha1.GroupPhase
		repairs []RolloutRepair
	}{
		{"a stale primary whose Pods stay: applied in place, no switchover",
			in(keeps(stale(back("iad"))), back("pdx")), RolloutIdle, "", "", []RolloutRepair{{Site: "iad"}}},
		{"a primary's strategy set to RollingUpdate: restored in place, no switchover",
			in(strategy(back("iad")), back("pdx")), RolloutIdle, "", "", []RolloutRepair{{Site: "iad", Strategy: true}}},
		{"a strategy and a template changed on the primary: the strategy alone first",
			in(strategy(stale(back("iad"))), back("pdx")), RolloutIdle, "", "", []RolloutRepair{{Site: "iad", Strategy: true}}},
		{"a drifted replica whose Pods stay: applied in place, no restart",
			in(back("iad"), keeps(drifted(back("pdx")))), RolloutIdle, "", "", []RolloutRepair{{Site: "pdx"}}},
		{"a strategy drift on a Deployment that is rolling: ordered, since the strategy moves its Pods",
			in(back("iad"), strategy(down(back("pdx")))), RolloutUpdate, "pdx", v1alpha1.GroupPhaseUpdating, nil},
		{"a primary's strategy changed, its status not yet observed: neither repaired nor switched over yet",
			in(func() RolloutSite { s := strategy(back("iad")); s.PodReady, s.StatusLags = false, true; return s }(), back("pdx")),
			RolloutIdle, "", "", nil},
		{"a template change: ordered as before",
			in(stale(back("iad")), stale(back("pdx"))), RolloutUpdate, "pdx", v1alpha1.GroupPhaseUpdating, nil},
		{"repairs go on beside the ordered update",
			in(stale(back("iad")), keeps(stale(back("pdx"))), stale(back("fra"))),
			RolloutUpdate, "fra", v1alpha1.GroupPhaseUpdating, []RolloutRepair{{Site: "pdx"}}},
		{"repairs go on while a failover is in flight: no Pod moves",
			func() RolloutInput {
				i := in(keeps(stale(back("iad"))), back("pdx"))
				i.EmergencyInFlight = true
				return i
			}(), RolloutIdle, "", "", []RolloutRepair{{Site: "iad"}}},
		{"a fenced site's strategy is restored too: no Pod moves",
			in(back("iad"), fenced(strategy(back("pdx")))), RolloutIdle, "", "", []RolloutRepair{{Site: "pdx", Strategy: true}}},
		{"a site without a Deployment: created by the order, nothing to repair",
			in(back("iad"), func() RolloutSite { s := keeps(stale(back("pdx"))); s.Exists = false; return s }()),
			RolloutUpdate, "pdx", v1alpha1.GroupPhaseUpdating, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanRollout(tc.in)
			if got.Action != tc.action || got.Site != tc.site || got.Phase != tc.phase || !slices.Equal(got.Repairs, tc.repairs) {
				t.Fatalf("got %+v, want %s site %q phase %q repairs %v", got, tc.action, tc.site, tc.phase, tc.repairs)
			}
		})
	}
}
