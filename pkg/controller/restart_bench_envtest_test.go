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
	"github.com/shipstream/bloodraven/pkg/failover"
)

// BenchmarkOperatorRestart measures what an operator restart in the middle
// of a failover costs the application, with the real operator, real
// sidecars and real MariaDB at the test timings, four writers inserting
// through the -primary endpoint. The operator process is stopped mid-way
// and a new one (fresh memory, the status kept) started at once: this
// harness has no election, as a container restarted in its own Pod takes
// its Lease back at once (cmd/operator). The kubelet's restart delay is
// not in these figures (it is 10 s in the playground, whose figures are
// not measured here). It prints one figure a line:
//
//	operator-restart-planned-window-median <n> ms   the planned switchover's
//	  write gap (last write acknowledged by the old primary -> first by the
//	  new) when the operator is stopped as the request enters Draining
//	operator-killed-mid-failover-median <n> ms      the emergency failover's
//	  write gap when the primary's mysqld is killed and the operator is
//	  stopped once the failover's intent is persisted
//	operator-restart-ready-median <n> ms            a new process's start
//	  -> Ready (leading, every group loaded)
//
// and the max of each. Run it with `make bench-restart`;
// BLOODRAVEN_BENCH_ROUNDS sets the rounds of each kind (default and least 4).
func BenchmarkOperatorRestart(b *testing.B) {
	rounds := 4
	if v, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_ROUNDS")); err == nil && v > rounds {
		rounds = v
	}
	fmt.Printf("restart-settings pollInterval=%s peerCheckInterval=%s leaseTimeout=%s restartDelay=0s\n",
		pollInterval, peerCheckInterval, leaseTimeout)
	planned, readyP := restartPlanned(b, rounds)
	emergency, readyE := restartEmergency(b, rounds)
	ready := append(readyP, readyE...)
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"operator-restart-planned-window", planned}, {"operator-killed-mid-failover", emergency}, {"operator-restart-ready", ready}} {
		fmt.Printf("%s-median %d ms\n", f.name, median(f.ds).Milliseconds())
		fmt.Printf("%s-max %d ms\n", f.name, slices.Max(f.ds).Milliseconds())
	}
}

// restartPlanned switches a caught-up pair back and forth, stopping the
// operator as each request enters Draining and starting a new one at once.
func restartPlanned(b *testing.B, rounds int) (windows, ready []time.Duration) {
	e := newEnv(b, "a", "b")
	e.createGroup(func(spec map[string]any) { spec["failoverCooldown"] = "1s" })
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(4, e.followPrimary())
	defer w.halt()
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 20 })
	from, to := "a", "b"
	for round := range rounds {
		e.caughtUp(to)
		start := time.Now()
		request := fmt.Sprintf("%s:maxLagWait=%ds", to, 60+round)
		e.annotate(request)
		if phase := e.waitHolding(request); phase != v1alpha1.PhaseDraining {
			fmt.Printf("restart-planned-round %d stopped in %s (Draining passed between two reads)\n", round, phase)
		}
		ready = append(ready, e.restartOperator())
		e.plannedFast(request)
		e.eventually(10*time.Second, "writes on "+to, func() bool { return w.ackedOn(to, start) > 0 })
		win, ok := w.window(from, to, start)
		if !ok {
			b.Fatalf("planned round %d: no acknowledged write on one side of the switchover", round)
		}
		windows = append(windows, win)
		from, to = to, from
	}
	if missing := e.missingOn(from, w.halt()); len(missing) > 0 {
		b.Fatalf("%d acknowledged writes missing on %s", len(missing), from)
	}
	return windows, ready
}

// restartEmergency kills the primary's mysqld, stops the operator once the
// failover's intent is persisted and starts a new one at once; the killed
// mysqld is started again and rejoins before the next round fails over the
// other way.
func restartEmergency(b *testing.B, rounds int) (windows, ready []time.Duration) {
	e := newEnv(b, "a", "b")
	e.createGroup(func(spec map[string]any) { spec["failoverCooldown"] = "1s" })
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(4, e.followPrimary())
	defer w.halt()
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 20 })
	from, to := "a", "b"
	for round := range rounds {
		e.caughtUp(to)
		start := time.Now()
		gen := e.get().Status.TopologyGeneration
		e.db.Kill(e.index(from))
		e.eventually(20*time.Second, "intent persisted", func() bool {
			f := e.get().Status.Failover
			return f != nil && f.Generation > gen
		})
		ready = append(ready, e.restartOperator())
		e.eventually(30*time.Second, "writes on "+to, func() bool { return w.ackedOn(to, start) > 0 })
		win, ok := w.window(from, to, start)
		if !ok {
			b.Fatalf("emergency round %d: no acknowledged write on one side of the failover", round)
		}
		windows = append(windows, win)
		if round == rounds-1 {
			break // no next round needs the killed site back
		}
		if err := e.db.Start(e.index(from)); err != nil {
			b.Fatal(err)
		}
		e.eventually(60*time.Second, from+" rejoins", func() bool {
			g := e.get()
			return g.Status.Failover == nil && g.Status.ActiveSite == to && site(g, from).Replicating
		})
		from, to = to, from
	}
	return windows, ready
}

// restartOperator stops the running operator and starts a new one at
// once; it returns how long the new one took to be Ready.
func (e *env) restartOperator() time.Duration {
	e.t.Helper()
	e.op.stop()
	run := e.startOperator()
	return e.eventually(20*time.Second, "the new operator Ready", func() bool { return run.op.Ready(e.t.Context()) == nil })
}

// waitHolding waits, reading status every 2 ms, until the request holds
// the topology (Draining first, the source about to be fenced), and
// returns the phase seen.
func (e *env) waitHolding(request string) v1alpha1.PlannedFailoverPhase {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b := e.get().Status.PlannedFailover; b != nil && b.Request == request && failover.PlannedHolds(b.Phase) {
			return b.Phase
		}
		time.Sleep(2 * time.Millisecond)
	}
	e.t.Fatalf("planned %q never seen holding the topology: %+v", request, e.get().Status.PlannedFailover)
	return ""
}
