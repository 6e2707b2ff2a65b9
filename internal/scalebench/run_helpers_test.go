//go:build scale

package scalebench

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// envInt is an integer from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envDuration is a duration from the environment, def when unset.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}

// runBench runs the bench and fails on a statement no stand-in knows or a
// group never observed; every pass of every group was on the poll
// schedule when at least half the passes the window holds were made.
func runBench(t *testing.T, groups int, measure time.Duration) *Result {
	t.Helper()
	poll := envDuration(t, "POLL", 2*time.Second)
	// The operator converges groups one at a time before their loops start
	// (about a second each on a loaded two-core machine): the wait scales.
	settle := envDuration(t, "SETTLE", time.Minute+time.Duration(groups)*1500*time.Millisecond)
	dir := os.Getenv("SCALE_DIR") // kept for a look at the operator's log
	if dir == "" {
		dir = t.TempDir()
	}
	res, err := Run(t.Context(), Config{Groups: groups, Poll: poll, Settle: settle, Measure: measure,
		Dir: dir, Logf: t.Logf})
	if res != nil {
		for site, u := range res.Unknown {
			t.Errorf("site %s was sent statements the stand-in does not know: %q", site, u)
		}
	}
	if err != nil {
		if res != nil {
			tailLog(t, res.OperatorLog)
		}
		t.Fatal(err)
	}
	if len(res.Unobserved) > 0 {
		t.Errorf("%d groups not in their steady state at the end (first %s)", len(res.Unobserved), res.Unobserved[0])
	}
	want := float64(groups) * res.WindowSeconds / poll.Seconds() / 2
	if res.Passes < want {
		t.Errorf("%.0f timed passes in %.0fs of %d groups polled every %s, want at least %.0f",
			res.Passes, res.WindowSeconds, groups, poll, want)
	}
	t.Logf("statements answered: %v", res.Served)
	return res
}

func tailLog(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	t.Logf("operator log tail:\n%s", b)
}
