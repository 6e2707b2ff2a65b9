//go:build db

package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// BenchmarkSemiSyncCommit measures what semi-synchronous replication costs a
// commit: a real MariaDB primary and one replica over loopback, four
// writers inserting one row per transaction as the application, first with
// asynchronous replication and then with the primary a semi-sync source
// (required: a timeout it never reaches) and the replica acknowledging, both
// set by mysql.ConfigureSemiSync as the operator sets them. The phases
// alternate (async, semi-sync, async, semi-sync, ...) so that a burst of
// load from elsewhere on the machine falls on both. It prints one figure a
// line:
//
//	async-commit-p50 <v> ms
//	semisync-commit-p50 <v> ms
//	semisync-commit-p99 <v> ms
//	semisync-throughput-ratio <v> ratio   (semi-sync writes/s over async)
//
// Run it with `make bench-semisync`. BLOODRAVEN_BENCH_SECONDS sets each
// phase's length (default 3) and BLOODRAVEN_BENCH_ROUNDS the number of
// phase pairs (default 3). It asserts nothing about the times.
func BenchmarkSemiSyncCommit(b *testing.B) {
	seconds, rounds := envInt("BLOODRAVEN_BENCH_SECONDS", 3), envInt("BLOODRAVEN_BENCH_ROUNDS", 3)
	s := startSites(b, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	mustExec(b, s.db(b, 0, true), "CREATE TABLE bench (id BIGINT PRIMARY KEY, pad VARCHAR(64))")
	app := s.db(b, 0, true)
	app.SetMaxOpenConns(4)
	app.SetMaxIdleConns(4)
	var next atomic.Int64
	var async, semi commitRun
	b.ResetTimer()
	for round := range rounds {
		setSemiSync(ctx, b, s, false)
		async.add(commitLoad(ctx, b, app, &next, 4, time.Duration(seconds)*time.Second))
		setSemiSync(ctx, b, s, true)
		before := s.status(b, 0).SemiSync.SourceNoTx
		semi.add(commitLoad(ctx, b, app, &next, 4, time.Duration(seconds)*time.Second))
		if st := s.status(b, 0).SemiSync; st.SourceNoTx != before || !st.SourceActive {
			b.Fatalf("round %d: commits went out without an acknowledgement (%+v)", round, st)
		}
	}
	b.StopTimer()
	fmt.Printf("async-commit-p50 %.2f ms\n", ms(percentile(async.lat, 0.50)))
	fmt.Printf("semisync-commit-p50 %.2f ms\n", ms(percentile(semi.lat, 0.50)))
	fmt.Printf("semisync-commit-p99 %.2f ms\n", ms(percentile(semi.lat, 0.99)))
	fmt.Printf("semisync-throughput-ratio %.2f ratio\n", semi.rate()/async.rate())
}

// setSemiSync makes server 0 a semi-sync source (required: an hour's
// timeout) and server 1 its acknowledging replica, or turns both off, and
// waits until the source counts its replica (or no longer waits).
func setSemiSync(ctx context.Context, b *testing.B, s *sites, on bool) {
	b.Helper()
	src := mysql.SemiSyncSettings{Source: on, Timeout: time.Hour}
	if err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(ctx, src); err != nil {
		b.Fatalf("source: %v", err)
	}
	if err := s.in[1].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: on}); err != nil {
		b.Fatalf("replica: %v", err)
	}
	eventually(b, 10*time.Second, "the source's semi-sync state follows the settings", func() bool {
		st := s.status(b, 0).SemiSync
		if on {
			return st.SourceEnabled && st.SourceActive && st.SourceClients == 1
		}
		return !st.SourceEnabled
	})
}

// commitRun is every commit's latency over the phases of one mode, and the
// time those phases took.
type commitRun struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (r *commitRun) add(lat []time.Duration, elapsed time.Duration) {
	r.lat = append(r.lat, lat...)
	r.elapsed += elapsed
}

func (r *commitRun) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// commitLoad runs n writers for d, each inserting one row per autocommit
// transaction, and returns every commit's latency and the time taken.
func commitLoad(ctx context.Context, b *testing.B, db *sql.DB, next *atomic.Int64, n int, d time.Duration) ([]time.Duration, time.Duration) {
	b.Helper()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	stop := start.Add(d)
	for range n {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				if _, err := db.ExecContext(ctx, "INSERT INTO bench VALUES (?, REPEAT('x', 64))", next.Add(1)); err != nil {
					failed.Store(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := failed.Load().(error); ok {
		b.Fatalf("insert: %v", err)
	}
	return lat, elapsed
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
