package sim

import "testing"

// TestSimRealFailover runs seeds beyond TestSimSeeds' range with
// pkg/failover's emergency step machine as the operator's sequencer, on top
// of the real sidecar and confirmation (TestSimRealCode covers the first ones).
func TestSimRealFailover(t *testing.T) {
	sum, err := RunSeeds(*flagFirst+uint64(*flagSeeds), *flagReal, *flagSteps, UseRealCode)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d (pkg/failover sequencer) broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	if sum.Stats.Emergency == 0 {
		t.Errorf("no emergency failover completed: %s", sum.StatsLine())
	}
	t.Log(sum.StatsLine())
}
