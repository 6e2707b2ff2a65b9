package sim

import (
	"strings"
	"testing"
	"time"
)

// TestSimRealPlanned runs every seed of TestSimSeeds with pkg/failover's
// planned-failover state machine (and the rest of the real code): no seed
// may break an invariant, planned-no-loss included, and the runs must have
// exercised the planned path, its rollbacks and both cooldown policies.
func TestSimRealPlanned(t *testing.T) {
	start := time.Now()
	var deferred, rolledBack, succeeded int
	sum := newSummary()
	for seed := *flagFirst; seed < *flagFirst+uint64(*flagSeeds); seed++ {
		cfg := ConfigForSeed(seed, *flagSteps)
		UseRealCode(&cfg)
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum.add(r)
		for _, line := range r.Trace {
			switch {
			case !strings.Contains(line, "planned: "):
			case strings.Contains(line, " Deferred "):
				deferred++
			case strings.Contains(line, "rolled back"):
				rolledBack++
			case strings.Contains(line, " Succeeded  promoted"):
				succeeded++
			}
		}
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d (pkg/failover planned machine) broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	if sum.Stats.Planned == 0 || succeeded == 0 || rolledBack == 0 || deferred == 0 {
		t.Errorf("planned path not exercised: succeeded=%d rolled-back=%d deferred=%d %s",
			succeeded, rolledBack, deferred, sum.StatsLine())
	}
	t.Logf("%d seeds in %s: planned succeeded=%d rolled-back=%d deferred=%d; %s", sum.Seeds,
		time.Since(start).Round(time.Millisecond), succeeded, rolledBack, deferred, sum.StatsLine())
}

// TestSimRealPlannedCheckerSeesLoss breaks the real machine's lag gate (its
// glue reports the target caught up) and expects the checker to catch the
// loss: the planned-no-loss invariant does watch the real path.
func TestSimRealPlannedCheckerSeesLoss(t *testing.T) {
	sum, err := RunSeeds(*flagFirst, 300, *flagSteps, func(c *Config) {
		UseRealCode(c)
		c.Break = BreakPlannedLagWait
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		for _, v := range r.Violations {
			if v.Invariant == InvariantPlannedLoss {
				return
			}
		}
	}
	t.Fatalf("no planned-no-loss violation with the lag gate broken (%d violations): %s", sum.Violations, sum.StatsLine())
}
