package sim

import (
	"flag"
	"os"
	"testing"
)

var (
	flagFirst    = flag.Uint64("sim.first", 1, "first seed TestSimRealOperator runs")
	flagSteps    = flag.Int("sim.steps", DefaultSteps, "steps per run")
	flagSeed     = flag.Uint64("sim.seed", 0, "seed TestSimReplay replays")
	flagSchedule = flag.String("sim.schedule", "", "file holding a schedule (as a trace prints it) for TestSimReplay")
)

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
