//go:build playground

package scenario

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestPlaygroundBench prints the playground's figures (make playground-bench):
// BLOODRAVEN_BENCH_RUNS runs of each measure, at least 5. While
// investigating, BLOODRAVEN_BENCH_ONLY names one measure (say "planned") to
// run alone; it also lets BLOODRAVEN_BENCH_RUNS go below 5.
func TestPlaygroundBench(t *testing.T) {
	only := os.Getenv("BLOODRAVEN_BENCH_ONLY")
	runs, least := 5, 5
	if only != "" {
		least = 1
	}
	if n, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_RUNS")); err == nil && n >= least {
		runs = n
	}
	envOnce.Do(func() { env, envErr = Start(context.Background(), Options{Log: os.Stderr}) })
	if envErr != nil {
		t.Fatalf("playground: %v", envErr)
	}
	if err := env.Bench(t.Context(), only, runs, os.Stdout); err != nil {
		t.Fatal(err)
	}
}
