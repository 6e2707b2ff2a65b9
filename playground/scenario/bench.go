package scenario

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// A measure is one figure of the benchmark: a scenario's measurement, run on
// a fresh group each time.
type measure struct {
	name  string
	run   func(ctx context.Context, e *Env) (map[string]float64, Result)
	title string
}

// measures: the emergency RTO with the spec's default timings; the others
// with the scenarios' short timings.
var measures = []measure{
	{"emergency-rto", benchRTO, "primary killed to the first write acknowledged through DNS on the new primary (default settings)"},
	{"planned", benchPlanned, "planned failover under load: write window (ms) and duration (s)"},
	{"stale-fence", benchStale, "stale primary: peer holds the new view to the stale primary refusing writes"},
	{"isolated-fence", benchIsolated, "isolated primary: cut off to refusing writes; acknowledged writes lost (async)"},
	{"isolated-required", benchIsolatedRequired, "isolated primary with semi-sync required: acknowledged writes lost"},
	{"rolling-update", benchRolling, "ordered update of three sites under load: longest write gap (ms) and duration (s)"},
}

func benchRTO(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := Result{Name: "bench-emergency"}
	g, l, err := setup(ctx, e, "bench-rto", Plan{SpecDefaults: true})
	defer func() { teardown(e, g, l) }()
	if err != nil {
		return nil, r.fail(err)
	}
	rto, err := killPrimary(ctx, g, l, &r)
	if err != nil {
		return nil, r.fail(err)
	}
	return map[string]float64{"emergency-rto": rto.Seconds()}, r
}

func benchPlanned(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := Result{Name: "bench-planned"}
	g, l, err := setup(ctx, e, "bench-planned", Plan{Load: LoadOptions{Primary: true}})
	defer func() { teardown(e, g, l) }()
	if err != nil {
		return nil, r.fail(err)
	}
	if err := plannedSwitch(ctx, g, l, &r); err != nil {
		return nil, r.fail(err)
	}
	return map[string]float64{"planned-window": r.Figures["window-ms"], "planned-duration": r.Figures["duration-s"]}, r
}

func benchRolling(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := rollingUpdateWith(ctx, e, "bench-rolling-update", LoadOptions{Primary: true}, specChange)
	return figures(r, map[string]string{"window-ms": "rolling-update-window", "duration-s": "rolling-update-duration"}), r
}

func benchStale(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := stalePrimary(ctx, e)
	return figure(r, "fence-s", "stale-fence"), r
}

func benchIsolated(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := isolatedPrimary(ctx, e)
	return figures(r, map[string]string{"fence-s": "isolated-fence", "lost-acked": "isolated-lost-acked-async"}), r
}

func benchIsolatedRequired(ctx context.Context, e *Env) (map[string]float64, Result) {
	r := isolatedPrimaryRequired(ctx, e)
	return figure(r, "lost-acked", "isolated-lost-acked-required"), r
}

// figures renames several of a scenario's figures (have to want) for the
// bench; nil when one is missing.
func figures(r Result, names map[string]string) map[string]float64 {
	out := map[string]float64{}
	for have, want := range names {
		v, ok := r.Figures[have]
		if !ok {
			return nil
		}
		out[want] = v
	}
	return out
}

// figure renames a scenario's figure for the bench; nil when it has none.
func figure(r Result, have, want string) map[string]float64 {
	v, ok := r.Figures[have]
	if !ok {
		return nil
	}
	return map[string]float64{want: v}
}

// units of each figure.
var units = map[string]string{"emergency-rto": "s", "planned-window": "ms", "planned-duration": "s",
	"stale-fence": "s", "isolated-fence": "s", "rolling-update-window": "ms", "rolling-update-duration": "s",
	"isolated-lost-acked-async": countUnit, "isolated-lost-acked-required": countUnit}

// countUnit marks a figure that is a count over all runs: one line, the
// total, instead of a median and a maximum.
const countUnit = "count"

// Bench runs every measure (or only the one named only, when not empty)
// runs times and writes one figure a line to out: "<figure>-median <n>
// <unit>" and "<figure>-max <n> <unit>", or for a count "<figure> <total>
// count". It returns an error when a run
// broke a promise or could not measure, or when only names no measure.
func (e *Env) Bench(ctx context.Context, only string, runs int, out io.Writer) error {
	samples := map[string][]float64{}
	var failed []string
	ran := false
	for _, m := range measures {
		if only != "" && m.name != only {
			continue
		}
		ran = true
		for i := range runs {
			e.Logf("bench %s run %d/%d: %s", m.name, i+1, runs, m.title)
			start := time.Now()
			figs, r := m.run(ctx, e)
			r.Duration = time.Since(start)
			e.Logf("%s", r.String())
			// A figure beyond its goal is reported, not fatal; a broken
			// promise or a run that could not measure is.
			if r.Broken > 0 || figs == nil {
				failed = append(failed, fmt.Sprintf("%s run %d: %s", m.name, i+1, strings.Join(r.Failures, "; ")))
			}
			for k, v := range figs {
				samples[k] = append(samples[k], v)
			}
		}
	}
	if !ran {
		return fmt.Errorf("bench: no measure named %q", only)
	}
	names := make([]string, 0, len(samples))
	for k := range samples {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if units[k] == countUnit {
			fmt.Fprintf(out, "%s %.0f %s\n", k, sum(samples[k]), countUnit)
			e.Logf("%s per run %v", k, samples[k])
			continue
		}
		med, mx := medianMax(samples[k])
		fmt.Fprintf(out, "%s-median %s %s\n%s-max %s %s\n", k, format(med, units[k]), units[k], k, format(mx, units[k]), units[k])
		e.Logf("%s samples %v", k, samples[k])
	}
	if len(failed) > 0 {
		return fmt.Errorf("bench runs failed:\n  %s", strings.Join(failed, "\n  "))
	}
	return nil
}

func format(v float64, unit string) string {
	if unit == "ms" {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// medianMax returns the median and the maximum of xs (not empty).
func medianMax(xs []float64) (float64, float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], s[n-1]
	}
	return (s[n/2-1] + s[n/2]) / 2, s[n-1]
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}
