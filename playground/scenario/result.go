package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

// Result is what a scenario found.
type Result struct {
	Name     string
	Failures []string
	Notes    []string
	// Figures are measurements, by name (unit in the name: "rto-s", "window-ms").
	Figures map[string]float64
	// Report is the checker's verdict on the history, when there was one.
	Report *load.Report
	// History is where the history was saved.
	History  string
	Duration time.Duration
	// Broken counts the failures that are broken promises (two writers,
	// acknowledged writes lost and not reported), as opposed to a
	// scenario's own expectations such as a latency bound.
	Broken int
}

// Passed says the scenario found nothing wrong.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Failf records a broken promise or expectation.
func (r *Result) Failf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Notef records an observation.
func (r *Result) Notef(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Figure records a measurement.
func (r *Result) Figure(name string, v float64) {
	if r.Figures == nil {
		r.Figures = map[string]float64{}
	}
	r.Figures[name] = v
}

// fail returns the result with one failure: for setup errors.
func (r Result) fail(err error) Result {
	r.Failf("%v", err)
	return r
}

// String is a readable account of the result.
func (r *Result) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s %s (%.1fs)\n", verdict, r.Name, r.Duration.Seconds())
	if r.Report != nil {
		fmt.Fprintf(&b, "  history: %s\n", r.Report.Summary())
	}
	if r.History != "" {
		fmt.Fprintf(&b, "  saved: %s\n", r.History)
	}
	names := make([]string, 0, len(r.Figures))
	for n := range r.Figures {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  figure %s %.3f\n", n, r.Figures[n])
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "  FAIL: %s\n", f)
	}
	return b.String()
}

// finish stops the load, saves and checks the history, and applies the
// promises every scenario checks: never two sites accepting writes, and no
// acknowledged write lost beyond what the group reported (allowLoss is the
// transactionsLost the group reported; -1 when no loss is acceptable).
func (r *Result) finish(ctx context.Context, l *Load, allowLoss int64) *load.Report {
	return r.judge(r.stop(ctx, l), allowLoss)
}

// stop ends the load, reads the ids back and saves the history.
func (r *Result) stop(ctx context.Context, l *Load) *load.History {
	h, err := l.Stop(ctx)
	if err != nil {
		r.Failf("read back: %v", err)
	}
	r.History = saveHistory(r.Name, h)
	return h
}

// judge checks a stopped load's history against the promises (see finish).
func (r *Result) judge(h *load.History, allowLoss int64) *load.Report {
	return r.judgeExcept(h, allowLoss, nil)
}

// judgeExcept is judge with a documented, bounded exception: the overlaps
// that tolerated accepts are noted instead of failed.
func (r *Result) judgeExcept(h *load.History, allowLoss int64, tolerated func(load.Overlap) bool) *load.Report {
	rep := load.Check(h, 500*time.Millisecond)
	r.Report = &rep
	var kept []load.Overlap
	for _, o := range rep.Overlaps {
		if tolerated != nil && tolerated(o) {
			r.Notef("tolerated overlap: %s", o)
			continue
		}
		kept = append(kept, o)
	}
	rep.Overlaps = kept
	for i, o := range rep.Overlaps {
		if i == 3 {
			r.Failf("… %d more two-writer overlaps", len(rep.Overlaps)-3)
			break
		}
		r.Failf("two writers: %s", o)
	}
	r.Broken += len(rep.Overlaps)
	if rep.Acked == 0 {
		r.Failf("no write was acknowledged at all")
	}
	switch n := int64(len(rep.Lost)); {
	case n == 0:
	case allowLoss < 0:
		r.Broken++
		r.Failf("%d acknowledged writes lost %v (first ids %v)", n, rep.LostBySite, head(rep.Lost))
	case n > allowLoss:
		r.Broken++
		r.Failf("%d acknowledged writes lost %v, but the group reported transactionsLost %d", n, rep.LostBySite, allowLoss)
	default:
		r.Notef("%d acknowledged writes lost %v, within the reported transactionsLost %d", n, rep.LostBySite, allowLoss)
	}
	return &rep
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 5)] }

// saveHistory writes h under $BLOODRAVEN_PLAYGROUND_HISTORY (default
// $TMPDIR/bloodraven-scenarios) and returns the path, or "" on failure.
func saveHistory(name string, h *load.History) string {
	dir := os.Getenv("BLOODRAVEN_PLAYGROUND_HISTORY")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "bloodraven-scenarios")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-%s.json", name, time.Now().Format("20060102-150405")))
	if err := h.Save(p); err != nil {
		return ""
	}
	return p
}

// writersAfter returns the writers' attempts that started at or after t.
func writersAfter(h []load.Attempt, t time.Time) []load.Attempt {
	var out []load.Attempt
	for _, a := range h {
		if !a.Start.Before(t) {
			out = append(out, a)
		}
	}
	return out
}
