package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// DefaultSteps is a run's length when none is given: ten logical minutes.
const DefaultSteps = 600

// Stats count what happened in a run, to show the faults exercised the code.
type Stats struct {
	Steps            int
	WriterSteps      int // steps that ended with a writable site
	Writes           uint64
	Emergency        int
	Planned          int
	PlannedFailed    int
	Reasserts        int
	SidecarFences    map[string]int // by reason: view, lease
	DivergedSites    int
	FenceConfirmedBy map[string]int
	Faults           map[FaultKind]int // fired, by kind
}

// Result is one run's outcome.
type Result struct {
	Config     Config
	Schedule   Schedule
	Violations []Violation
	Trace      []string
	Stats      Stats
}

// Failed reports whether an invariant broke.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

// Run simulates one run. It errs only on a bad Config.
func Run(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, fmt.Errorf("run seed %d: %w", cfg.Seed, err)
	}
	cfg = cfg.withDefaults()
	sched := cfg.Schedule
	if sched == nil {
		sched = scheduleFor(cfg)
	}
	w := newWorld(cfg, sched)
	w.stats.SidecarFences, w.stats.Faults = map[string]int{}, map[FaultKind]int{}
	if cfg.OperatorReplicas == 2 {
		w.stats.Faults[FaultTwoOperators]++
	}
	if cfg.MariaDB {
		w.stats.Faults[FaultMariaDB]++
	}
	for w.step < cfg.Steps {
		w.runStep()
	}
	w.finishStats()
	return Result{Config: cfg, Schedule: sched, Violations: w.check.violations, Trace: w.trace, Stats: w.stats}, nil
}

func (w *World) finishStats() {
	st := w.op.persisted()
	for _, h := range st.History {
		if h.Kind == v1alpha1.KindPlanned {
			w.stats.Planned++
		} else {
			w.stats.Emergency++
		}
	}
	for _, rec := range st.Sites {
		if !rec.Divergent.IsEmpty() {
			w.stats.DivergedSites++
		}
	}
	w.stats.FenceConfirmedBy = map[string]int{}
	for _, line := range w.trace {
		if _, by, ok := strings.Cut(line, "fence confirmed by "); ok {
			w.stats.FenceConfirmedBy[strings.TrimSuffix(by, ")")]++
		}
		switch {
		case strings.Contains(line, " "+v1alpha1.EventPlannedFailoverFailed+": "):
			w.stats.PlannedFailed++
		case strings.Contains(line, " "+v1alpha1.EventPrimaryReasserted+": "):
			w.stats.Reasserts++
		}
	}
}

// scheduleFor is the schedule a Config without one runs: drawn from its seed.
func scheduleFor(cfg Config) Schedule {
	return GenerateSchedule(rand.New(rand.NewPCG(cfg.Seed, 0x5c4e)), cfg)
}

// ReplayCommand is how to run this seed again, alone and with its trace.
func (r Result) ReplayCommand() string {
	return fmt.Sprintf("make sim SEED=%d STEPS=%d   (or: go test ./internal/sim -run TestSimReplay -v -sim.seed=%d -sim.steps=%d)",
		r.Config.Seed, r.Config.Steps, r.Config.Seed, r.Config.Steps)
}

// Report is the full account of a run: config, replay command, schedule,
// trace and violations. A schedule printed here can be fed back with
// -sim.schedule to replay the run exactly.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config: %s\nreplay: %s\nschedule:\n", r.Config, r.ReplayCommand())
	for _, f := range r.Schedule {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString("trace:\n")
	for _, line := range r.Trace {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "%s\n", v)
	}
	return b.String()
}

// Summary aggregates many runs.
type Summary struct {
	Seeds      int
	Violations int
	Failures   []Result // the first few failing runs
	Stats      Stats
}

// maxKeptFailures bounds the failing runs a Summary keeps.
const maxKeptFailures = 3

// RunSeeds runs seeds first..first+n-1 with ConfigForSeed, letting adjust
// change each Config (nil for none).
func RunSeeds(first uint64, n int, steps int, adjust func(*Config)) (Summary, error) {
	sum := newSummary()
	type done struct {
		i   int
		r   Result
		err error
	}
	next, out := make(chan int), make(chan done)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				cfg := ConfigForSeed(first+uint64(i), steps)
				if adjust != nil {
					adjust(&cfg)
				}
				r, err := Run(cfg)
				if !r.Failed() {
					r.Trace = nil // only failures are reported
				}
				out <- done{i: i, r: r, err: err}
			}
		})
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		close(out)
	}()
	// Added in seed order, as they finish: the summary does not depend on
	// scheduling, and only the runs finished ahead of an earlier seed's
	// are held (a hundred thousand Results would not be).
	var firstErr error
	pending := map[int]done{}
	added := 0
	for d := range out {
		if firstErr != nil {
			continue // the rest are dropped; the error is returned once all ran
		}
		pending[d.i] = d
		for p, ok := pending[added]; ok && firstErr == nil; p, ok = pending[added] {
			delete(pending, added)
			if p.err != nil {
				firstErr = p.err
				break
			}
			sum.add(p.r)
			added++
		}
	}
	return sum, firstErr
}

func (s *Summary) add(r Result) {
	s.Seeds++
	s.Violations += len(r.Violations)
	if r.Failed() && len(s.Failures) < maxKeptFailures {
		s.Failures = append(s.Failures, r)
	}
	st := &s.Stats
	st.Writes += r.Stats.Writes
	st.Steps += r.Stats.Steps
	st.WriterSteps += r.Stats.WriterSteps
	st.Emergency += r.Stats.Emergency
	st.Planned += r.Stats.Planned
	st.PlannedFailed += r.Stats.PlannedFailed
	st.Reasserts += r.Stats.Reasserts
	st.DivergedSites += r.Stats.DivergedSites
	for k, v := range r.Stats.SidecarFences {
		st.SidecarFences[k] += v
	}
	for k, v := range r.Stats.Faults {
		st.Faults[k] += v
	}
	for k, v := range r.Stats.FenceConfirmedBy {
		st.FenceConfirmedBy[k] += v
	}
}

func newSummary() Summary {
	return Summary{Stats: Stats{SidecarFences: map[string]int{}, FenceConfirmedBy: map[string]int{}, Faults: map[FaultKind]int{}}}
}

// Summarize is the Summary of one run.
func Summarize(r Result) Summary {
	sum := newSummary()
	sum.add(r)
	return sum
}

// Lines are the two summary lines `make sim` and the tests end with.
func (s Summary) Lines() string {
	return fmt.Sprintf("sim-seeds %d seeds\nsim-violations %d count", s.Seeds, s.Violations)
}

// FaultLines are one sim-faults-<kind> line per fault kind a run may
// draw, with how many fired.
func (s Summary) FaultLines() string {
	var lines []string
	seen := map[FaultKind]bool{}
	for _, k := range append(slices.Clone(weightedKinds), realOperatorKinds...) {
		if !seen[k.kind] {
			seen[k.kind] = true
			lines = append(lines, fmt.Sprintf("sim-faults-%s %d count", k.kind, s.Stats.Faults[k.kind]))
		}
	}
	return strings.Join(lines, "\n")
}

// StatsLine describes what the runs exercised.
func (s Summary) StatsLine() string {
	st := s.Stats
	avail := 0.0
	if st.Steps > 0 {
		avail = 100 * float64(st.WriterSteps) / float64(st.Steps)
	}
	return fmt.Sprintf("writable=%.1f%% writes=%d emergency=%d planned=%d planned-failed=%d reasserts=%d diverged=%d sidecar-fences=%v confirmed-by=%v",
		avail, st.Writes, st.Emergency, st.Planned, st.PlannedFailed, st.Reasserts, st.DivergedSites, st.SidecarFences, st.FenceConfirmedBy)
}
