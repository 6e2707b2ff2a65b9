//go:build playground

package scenario

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestPlaygroundBench prints the playground's figures (make playground-bench):
// BLOODRAVEN_BENCH_RUNS runs of each measure, at least 5.
func TestPlaygroundBench(t *testing.T) {
	runs := 5
	if n, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_RUNS")); err == nil && n > runs {
		runs = n
	}
	envOnce.Do(func() { env, envErr = Start(context.Background(), Options{Log: os.Stderr}) })
	if envErr != nil {
		t.Fatalf("playground: %v", envErr)
	}
	if err := env.Bench(t.Context(), runs, os.Stdout); err != nil {
		t.Fatal(err)
	}
}
