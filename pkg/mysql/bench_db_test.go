//go:build db

package mysql_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSwitchover moves the primary back and forth between two real
// MariaDB servers by the verbs alone (fence, wait, promote, repoint) while
// four writers insert, and prints one figure a line:
//
//	switchover-writable-p50 <n> ms  (switchover start -> target writable)
//	switchover-window-p50 <n> ms    (last acked write on the old primary ->
//	                                 first acked write on the new one)
//
// and the p99 of each. Run it with `make bench-db`; BLOODRAVEN_BENCH_ROUNDS
// sets the number of switchovers (default 20).
func BenchmarkSwitchover(b *testing.B) {
	rounds := 20
	if v, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	s := startSites(b, 2)
	var primary atomicInt
	w := startWriters(b, s, 4, primary.load)
	defer w.halt()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var writable, window []time.Duration
	b.ResetTimer()
	for round := range rounds {
		from, to := round%2, 1-round%2
		time.Sleep(300 * time.Millisecond) // writers build up load and lag
		start := time.Now()
		took, err := s.switchover(ctx, from, to)
		primary.store(to)
		if err != nil {
			b.Fatalf("round %d (%d -> %d): %v", round, from, to, err)
		}
		writable = append(writable, took)
		win, ok := w.window(from, to, start)
		for wait := time.Now(); !ok && time.Since(wait) < 5*time.Second; {
			time.Sleep(10 * time.Millisecond) // writers are still landing on the new primary
			win, ok = w.window(from, to, start)
		}
		if !ok {
			b.Fatalf("round %d: no acked write on one side of the switchover", round)
		}
		window = append(window, win)
	}
	b.StopTimer()
	for _, f := range []struct {
		name string
		ds   []time.Duration
	}{{"writable", writable}, {"window", window}} {
		fmt.Printf("switchover-%s-p50 %d ms\n", f.name, percentile(f.ds, 0.50).Milliseconds())
		fmt.Printf("switchover-%s-p99 %d ms\n", f.name, percentile(f.ds, 0.99).Milliseconds())
	}
}

// window is the gap between the last write acked by server from and the
// first write acked by server to after start.
func (w *writers) window(from, to int, start time.Time) (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lastOld, firstNew time.Time
	for _, a := range w.acked {
		switch {
		case a.server == from && a.at.After(lastOld):
			lastOld = a.at
		case a.server == to && a.at.After(start) && (firstNew.IsZero() || a.at.Before(firstNew)):
			firstNew = a.at
		}
	}
	return firstNew.Sub(lastOld), !lastOld.IsZero() && !firstNew.IsZero()
}

// percentile by nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
