package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/shipstream/bloodraven/internal/sim"
)

// simGCPercent is the collector's target growth unless GOGC is set.
const simGCPercent = 400

func main() { os.Exit(run()) }

// run is the command; it returns the exit code (2 on error, 1 when an
// invariant broke) so deferred work, such as a profile, completes.
func run() int {
	seeds := flag.Int("seeds", 2000, "how many seeds to run")
	first := flag.Uint64("first", 1, "first seed")
	steps := flag.Int("steps", sim.DefaultSteps, "steps (logical seconds) per run")
	seed := flag.Uint64("seed", 0, "replay this one seed and print its trace")
	schedule := flag.String("schedule", "", "with -seed: file holding the schedule to replay (as a trace prints it)")
	// -real and -realop chose the real code over the models, now gone:
	// accepted, so that old replay commands still run, and ignored.
	flag.Bool("real", false, "ignored: every run is the real operator's")
	flag.Bool("realop", false, "ignored: every run is the real operator's")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		// A run allocates much and keeps little: collecting at four times
		// the live heap, not twice, saves a third of the CPU (and costs
		// tens of megabytes).
		debug.SetGCPercent(simGCPercent)
	}
	if *cpuProfile != "" {
		stop, err := startProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer stop()
	}
	var (
		sum     sim.Summary
		err     error
		elapsed time.Duration
	)
	if *seed != 0 {
		sum, err = replay(*seed, *steps, *schedule)
	} else {
		start := time.Now()
		sum, err = sim.RunSeeds(*first, *seeds, *steps, nil)
		elapsed = time.Since(start)
		for _, r := range sum.Failures {
			fmt.Printf("seed %d broke an invariant:\n%s\n", r.Config.Seed, r.Report())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(sum.StatsLine())
	fmt.Println(sum.Lines())
	fmt.Println(sum.FaultLines())
	if elapsed > 0 {
		fmt.Printf("sim-seeds-per-second %.1f seeds/s\n", float64(sum.Seeds)/elapsed.Seconds())
	}
	if sum.Violations > 0 {
		return 1
	}
	return 0
}

// startProfile starts a CPU profile written to path; the returned func
// stops it and closes the file.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func replay(seed uint64, steps int, scheduleFile string) (sim.Summary, error) {
	cfg := sim.ConfigForSeed(seed, steps)
	if scheduleFile != "" {
		text, err := os.ReadFile(scheduleFile)
		if err != nil {
			return sim.Summary{}, fmt.Errorf("read schedule %s: %w", scheduleFile, err)
		}
		if cfg.Schedule, err = sim.ParseSchedule(string(text)); err != nil {
			return sim.Summary{}, fmt.Errorf("parse schedule %s: %w", scheduleFile, err)
		}
	}
	r, err := sim.Run(cfg)
	if err != nil {
		return sim.Summary{}, err
	}
	fmt.Print(r.Report())
	return sim.Summarize(r), nil
}
