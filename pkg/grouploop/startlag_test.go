package grouploop

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestPassStartLag records how late a timed pass starts against its
// schedule, never less than zero, and nothing off the schedule.
func TestPassStartLag(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		due     time.Time
		now     time.Time
		count   uint64
		wantSum float64
	}{
		{"late by 150ms", t0, t0.Add(150 * time.Millisecond), 1, 0.15},
		{"early counts as on time", t0, t0.Add(-time.Second), 1, 0},
		{"off the schedule (planned step): not recorded", time.Time{}, t0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMetrics(prometheus.NewRegistry())
			l := &Loop{env: &Env{Metrics: m, Clock: clockAt(func() time.Time { return c.now })}, due: c.due}
			l.observeStartLag()
			var out dto.Metric
			if err := m.PassStartLag.Write(&out); err != nil {
				t.Fatal(err)
			}
			h := out.GetHistogram()
			if h.GetSampleCount() != c.count || h.GetSampleSum() < c.wantSum-1e-9 || h.GetSampleSum() > c.wantSum+1e-9 {
				t.Fatalf("count %d sum %v, want %d and %v", h.GetSampleCount(), h.GetSampleSum(), c.count, c.wantSum)
			}
		})
	}
}
