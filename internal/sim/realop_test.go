package sim

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/shipstream/bloodraven/pkg/sidecar"
)

var flagRealOp = flag.Int("sim.realop", 40, "how many seeds TestSimRealOperator runs with pkg/controller's loop")

// TestSimRealOperator runs seeds with the real operator: pkg/controller's
// poll loop, Registry and /active-site handler, pkg/failover's sequences
// and pkg/sidecar's Loop, against the simulated API server and mysqlds.
func TestSimRealOperator(t *testing.T) {
	sum, err := RunSeeds(*flagFirst, *flagRealOp, *flagSteps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d (real operator) broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	if sum.Stats.Emergency == 0 || sum.Stats.Planned == 0 || sum.Stats.SidecarFences[sidecar.ReasonLease] == 0 {
		t.Errorf("real-operator runs exercised nothing: %s", sum.StatsLine())
	}
	t.Log(sum.StatsLine())
}

// TestSimRealOperatorReplays: a seed's run with the real operator is a
// function of the seed, so that a failing seed replays exactly. The loop's
// probes run in parallel goroutines; nothing they do may depend on order.
func TestSimRealOperatorReplays(t *testing.T) {
	for _, seed := range []uint64{3, 11, 29} {
		var traces [2][]string
		for i := range traces {
			cfg := ConfigForSeed(seed, 300)
			r, err := Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = r.Trace
		}
		if !slices.Equal(traces[0], traces[1]) {
			t.Errorf("seed %d: two runs differ:\n%v\n---\n%v", seed, traces[0], traces[1])
		}
	}
}

// TestSimRealOperatorFoundSeeds replays the seeds on which the real
// operator's runs found bugs (docs/simulation.md, "What the real
// operator's runs found"), each with the schedule it had then
// (testdata/seeds), so that new fault kinds do not change them: each must
// run clean.
func TestSimRealOperatorFoundSeeds(t *testing.T) {
	for _, seed := range []uint64{1, 129, 149, 356, 712, 774, 1502, 1973, 2067, 2257, 4100, 7840, 9569, 10259,
		11935, 11990, 12350, 13496, 19134, 22681, 23008, 26588, 26673, 30972, 33882, 37803, 45025, 45064, 45482, 50470, 51436,
		61903, 62966, 84948, 300264} {
		cfg := ConfigForSeed(seed, DefaultSteps)
		text, err := os.ReadFile(fmt.Sprintf("testdata/seeds/realop-%d.txt", seed))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Schedule, err = ParseSchedule(string(text)); err != nil {
			t.Fatal(err)
		}
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Failed() {
			t.Errorf("seed %d broke an invariant:\n%s", seed, r.Report())
		}
	}
}
