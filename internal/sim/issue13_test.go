package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestSimErrantFormerPrimary scripts issue 13's path 3 with the real
// operator: site 0, the primary, is cut off from everything and
// acknowledges writes until its lease fences it; site 1 is promoted; after
// the cooldown site 1's mysqld dies for good and site 0 heals. Site 0
// holds writes the group discarded and lacks site 1's: it must never be
// made writable again (the checker sees a lost acknowledged write if it
// is), and the operator must mark it divergent although no site writes.
func TestSimErrantFormerPrimary(t *testing.T) {
	for _, sites := range []int{2, 3} {
		cfg := ConfigForSeed(13, 400)
		cfg.Roles = []v1alpha1.SiteRole{v1alpha1.RolePrimaryCandidate, v1alpha1.RolePrimaryCandidate,
			v1alpha1.RoleDROnly}[:sites]
		cfg.PollInterval, cfg.PeerCheckInterval, cfg.LeaseTimeout = time.Second, 2*time.Second, 6*time.Second
		cfg.FailureThreshold, cfg.RecoveryThreshold, cfg.Cooldown, cfg.WriteChance = 2, 1, 30*time.Second, 1
		sched, err := ParseSchedule("at=20 partition site=0 dur=120; at=100 crash-mysqld site=1 dur=1000")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Schedule = sched
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Failed() {
			t.Fatalf("%d sites: broke %d invariants:\n%s", sites, len(r.Violations), r.Report())
		}
		if r.Stats.Emergency == 0 || !strings.Contains(strings.Join(r.Trace, "\n"), "DivergenceDetected: site iad") {
			t.Fatalf("%d sites: the scenario did not happen: %+v\n%s", sites, r.Stats, strings.Join(r.Trace, "\n"))
		}
	}
}
