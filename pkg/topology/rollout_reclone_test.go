package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRolloutWaitsWhileARecloneRuns: c is being recloned (held: the
// loop marks its view AdminFenced; in Cloning its mysqld is stopped) from
// donor b. A spec change makes a and b stale. Restarting b would leave b
// and c down together (a alone holding the data; under required no site
// could acknowledge) and cut the clone's stream from its donor, failing
// the clone with c held and emptied. The update takes no step until the
// reclone ends.
func TestRolloutWaitsWhileARecloneRuns(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	a := RolloutSite{View: SiteView{Name: "a", State: v1alpha1.StateWritable}, Exists: true, PodReady: true,
		SidecarAskedAt: now.Add(-time.Second), Stale: true}
	b := RolloutSite{View: SiteView{Name: "b", State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}},
		Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second), Stale: true}
	c := RolloutSite{View: SiteView{Name: "c", State: v1alpha1.StateUnreachable, AdminFenced: true}, Exists: true,
		Stale: true}
	step := PlanRollout(RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "a", Decision: KindDegraded,
		Sites: []RolloutSite{a, b, c}, Recloning: "c", MaxLag: 30 * time.Second, PeerCheckInterval: 2 * time.Second, Now: now})
	if step.Action == RolloutUpdate && step.Site == "b" {
		t.Fatalf("b (the donor) restarted while c is recloned: %s", step.Message)
	}
}
