package sim

import (
	"strings"
	"testing"
)

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

// TestSimRealLeaseDeadlineSeeds replays, with the real code, the seeds on
// which pkg/failover's lease deadline once let the operator make the target
// writable while the old primary still held a lease renewed through the
// target's sidecar: the old primary loses the operator, the intent is
// published, and the target's Pod is killed before its sidecar was seen
// holding the new generation. The deadline skipped that gone peer instead of
// counting from when its Pod went away.
func TestSimRealLeaseDeadlineSeeds(t *testing.T) {
	cases := []struct {
		name string
		seed uint64
	}{
		{"iad cut from the operator at 556, target pdx's Pod killed at 568", 10453},
		{"pdx cut from the operator at 321, target iad's Pod killed at 357", 11143},
		{"iad cut from the operator at 277, target pdx's Pod killed at 305", 11463},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := ConfigForSeed(c.seed, DefaultSteps)
			UseRealCode(&cfg)
			r, err := Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Failed() {
				t.Fatalf("seed %d broke %d invariants:\n%s", c.seed, len(r.Violations), r.Report())
			}
			if !strings.Contains(r.Report(), "kill-pod") {
				t.Fatalf("seed %d no longer kills a Pod: the schedule changed, pick new seeds:\n%s", c.seed, r.Report())
			}
		})
	}
}
