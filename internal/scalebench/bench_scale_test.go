//go:build scale

package scalebench

import (
	"fmt"
	"testing"
	"time"
)

// TestBenchScale is `make bench-scale`: GROUPS (default 1000) groups,
// measured for MEASURE (default 60s); it prints the figures.
func TestBenchScale(t *testing.T) {
	res := runBench(t, envInt(t, "GROUPS", 1000), envDuration(t, "MEASURE", time.Minute))
	for _, line := range res.Figures() {
		fmt.Println(line)
	}
}
