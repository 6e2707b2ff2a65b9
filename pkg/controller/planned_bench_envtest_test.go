//go:build envtest

package controller_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// BenchmarkPlannedSwitchover switches the primary of a caught-up pair back
// and forth with the planned-failover annotation while four writers insert
// through the -primary endpoint (the Pod labelled role=primary), with the
// real operator, real sidecars and real MariaDB, at the test timings
// (pollInterval 250ms, peerCheckInterval 500ms). It prints one figure a line,
// median and max over the rounds:
//
//	planned-duration-median <n> s  (annotation written -> Succeeded observed)
//	planned-window-median <n> ms   (last write acknowledged by the old primary ->
//	                                first one acknowledged through -primary by the new)
//
// Run it with `make bench-planned`; BLOODRAVEN_BENCH_ROUNDS sets the number
// of rounds (default and least 10). BLOODRAVEN_BENCH_SIDECAR=default runs the
// sidecars with the CRD's default timings (peerCheckInterval 5s, leaseTimeout
// 20s), and BLOODRAVEN_BENCH_NUDGE=off stops the operator's nudges
// (benchSettings, nudge_envtest_test.go).
func BenchmarkPlannedSwitchover(b *testing.B) {
	rounds := 12
	if v, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_ROUNDS")); err == nil && v > rounds {
		rounds = v
	}
	e := newEnv(b, "a", "b")
	spec, deps := e.benchSettings(func(spec map[string]any) { spec["failoverCooldown"] = "1s" })
	e.createGroup(spec)
	e.startOperatorWith(deps)
	e.startSidecars("a", "b")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(4, e.followPrimary())
	defer w.halt()
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 20 })

	var total, window []time.Duration
	from, to := "a", "b"
	b.ResetTimer()
	for round := range rounds {
		e.caughtUp(to)
		start := time.Now()
		request := fmt.Sprintf("%s:maxLagWait=%ds", to, 60+round)
		e.annotate(request)
		e.plannedFast(request)
		total = append(total, time.Since(start))
		e.eventually(10*time.Second, "writes on "+to, func() bool { return w.ackedOn(to, start) > 0 })
		win, ok := w.window(from, to, start)
		if !ok {
			b.Fatalf("round %d: no acknowledged write on one side of the switchover", round)
		}
		window = append(window, win)
		from, to = to, from
	}
	b.StopTimer()
	if missing := e.missingOn(from, w.halt()); len(missing) > 0 {
		b.Fatalf("%d acknowledged writes missing on %s", len(missing), from)
	}
	fmt.Printf("planned-duration-median %.3f s\n", median(total).Seconds())
	fmt.Printf("planned-duration-max %.3f s\n", slices.Max(total).Seconds())
	fmt.Printf("planned-window-median %d ms\n", median(window).Milliseconds())
	fmt.Printf("planned-window-max %d ms\n", slices.Max(window).Milliseconds())
}

// caughtUp waits until target replicates and the cooldown since the last
// switchover is over, then lets the writers run a moment.
func (e *env) caughtUp(target string) {
	e.t.Helper()
	e.eventually(20*time.Second, target+" replicating", func() bool {
		g := e.get()
		s := site(g, target)
		lf := g.Status.LastFailover
		return s.State == v1alpha1.StateReadOnly && s.Replicating &&
			(lf == nil || time.Since(lf.Time.Time) > 1500*time.Millisecond)
	})
	time.Sleep(300 * time.Millisecond)
}

// plannedFast waits for Succeeded, reading status every 10 ms.
func (e *env) plannedFast(request string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b := e.get().Status.PlannedFailover; b != nil && b.Request == request && b.Phase.Terminal() {
			if b.Phase != v1alpha1.PhaseSucceeded {
				e.t.Fatalf("planned %q: %s/%s: %s", request, b.Phase, b.Reason, b.Message)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("planned %q not done within 30s: %+v", request, e.get().Status.PlannedFailover)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
