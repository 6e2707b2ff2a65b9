//go:build scale

package scalebench

import (
	"testing"
	"time"
)

// TestScaleSmall runs the real operator against GROUPS (default 50)
// groups of stand-ins: every group reaches and keeps its steady state,
// every group was polled on schedule, and the operator sent no statement
// the stand-ins do not know. No timing goal is asserted.
func TestScaleSmall(t *testing.T) {
	res := runBench(t, envInt(t, "GROUPS", 50), envDuration(t, "MEASURE", 20*time.Second))
	for _, line := range res.Figures() {
		t.Log(line)
	}
}
