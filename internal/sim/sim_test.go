package sim

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var (
	flagSeeds    = flag.Int("sim.seeds", 2000, "how many seeds TestSimSeeds runs")
	flagFirst    = flag.Uint64("sim.first", 1, "first seed TestSimSeeds runs")
	flagSteps    = flag.Int("sim.steps", DefaultSteps, "steps per run")
	flagSeed     = flag.Uint64("sim.seed", 0, "seed TestSimReplay replays")
	flagSchedule = flag.String("sim.schedule", "", "file holding a schedule (as a trace prints it) for TestSimReplay")
	flagReal     = flag.Int("sim.real", 500, "how many seeds TestSimRealCode runs with pkg/sidecar and pkg/failover")
)

// TestSimSeeds runs the seeds and fails, printing the first failing traces,
// when any invariant broke. It ends with the sim-seeds and sim-violations lines.
func TestSimSeeds(t *testing.T) {
	sum, err := RunSeeds(*flagFirst, *flagSeeds, *flagSteps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	t.Log(sum.StatsLine())
	fmt.Println(sum.Lines())
}

// TestSimRealCode runs seeds with pkg/sidecar's Loop as every sidecar and
// pkg/topology's ConfirmFence as the operator's fence confirmation.
func TestSimRealCode(t *testing.T) {
	sum, err := RunSeeds(*flagFirst, *flagReal, *flagSteps, UseRealCode)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Failures {
		t.Errorf("seed %d (real sidecar and confirmation) broke an invariant:\n%s", r.Config.Seed, r.Report())
	}
	if sum.Stats.Emergency == 0 || sum.Stats.SidecarFences[FenceByLease] == 0 {
		t.Errorf("real-code runs exercised nothing: %s", sum.StatsLine())
	}
	t.Log(sum.StatsLine())
}

// TestSimReplay replays one seed (-sim.seed), optionally with an explicit
// schedule (-sim.schedule), and logs its whole trace.
func TestSimReplay(t *testing.T) {
	if *flagSeed == 0 {
		*flagSeed = 7
	}
	cfg := ConfigForSeed(*flagSeed, *flagSteps)
	if *flagSchedule != "" {
		text, err := os.ReadFile(*flagSchedule)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Schedule, err = ParseSchedule(string(text)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + r.Report())
	if r.Failed() {
		t.Errorf("seed %d broke %d invariants", cfg.Seed, len(r.Violations))
	}
}
