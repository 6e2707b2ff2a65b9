package scalebench

import (
	"math"
	"strings"
	"testing"
)

const sample = `# HELP bloodraven_pass_start_lag_seconds x
bloodraven_pass_start_lag_seconds_bucket{le="0.01"} 50
bloodraven_pass_start_lag_seconds_bucket{le="0.1"} 90
bloodraven_pass_start_lag_seconds_bucket{le="+Inf"} 100
bloodraven_pass_start_lag_seconds_sum 3
bloodraven_pass_start_lag_seconds_count 100
`

// TestQuantile reads the operator's histogram text and estimates its
// quantiles inside their buckets.
func TestQuantile(t *testing.T) {
	h, err := parseHistogram(strings.NewReader(sample), LagMetric)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		q    float64
		want float64
	}{
		{"median at the first bound", 0.5, 0.01},
		{"inside the second bucket", 0.7, 0.01 + 0.09*0.5},
		{"in +Inf: the largest finite bound", 0.99, 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := h.Quantile(c.q); math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("q%.2f = %v, want %v", c.q, got, c.want)
			}
		})
	}
	if d := h.Sub(h); d.Total() != 0 {
		t.Fatalf("a histogram minus itself holds %v", d.Total())
	}
	if _, err := parseHistogram(strings.NewReader("other 1\n"), LagMetric); err == nil {
		t.Fatal("a missing histogram was read")
	}
}

// TestSumCounter adds every series of a counter and no other metric's.
func TestSumCounter(t *testing.T) {
	text := RequestsMetric + `{code="200",host="h",method="GET"} 10
` + RequestsMetric + `{code="200",host="h",method="PATCH"} 5
` + RequestsMetric + `_other 99
`
	got, err := sumCounter(strings.NewReader(text), RequestsMetric)
	if err != nil || got != 15 {
		t.Fatalf("sum %v, %v; want 15", got, err)
	}
}
