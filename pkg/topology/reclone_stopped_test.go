package topology

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRecloneStillReplicates: RecloneMayWipe judges only an observation
// that shows the site's replication stopped, or a site not observed now.
func TestRecloneStillReplicates(t *testing.T) {
	stopped := func(v *SiteView) { v.Replication.Running = false }
	tests := []struct {
		name string
		c    SiteView
		wait bool
	}{
		{name: "observed stopped", c: with(ro("c", "A:1-9"), stopped)},
		{name: "observed replicating", c: ro("c", "A:1-9"), wait: true},
		{name: "observed with its IO thread acknowledging", wait: true, c: with(ro("c", "A:1-9"), func(v *SiteView) {
			v.Replication.Running, v.Replication.SemiSyncAcking = false, true
		})},
		{name: "observed writable, replicating", c: with(wr("c", "A:1-9"), func(v *SiteView) { v.Replication.Running = true }),
			wait: true},
		{name: "down: judged as holding the active site's set", c: down("c")},
		{name: "stale: judged as holding the active site's set", c: with(ro("c", "A:1-9"), func(v *SiteView) { v.Stale = true })},
		{name: "unknown state", c: with(down("c"), func(v *SiteView) { v.State = v1alpha1.StateUnknown })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := RecloneStillReplicates(group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), tc.c), "c")
			if (why != "") != tc.wait {
				t.Fatalf("RecloneStillReplicates = %q, want wait %v", why, tc.wait)
			}
		})
	}
	if why := RecloneStillReplicates(group("a", wr("a", "A:1-10")), "c"); why == "" {
		t.Fatal("a site the group lacks was judged")
	}
}
