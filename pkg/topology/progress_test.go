package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestProgress: the Progressing condition names the change that runs.
func TestProgress(t *testing.T) {
	cases := []struct {
		name   string
		in     ProgressInput
		want   bool
		reason string
	}{
		{"nothing runs", ProgressInput{}, false, v1alpha1.ReasonIdle},
		{"an emergency failover", ProgressInput{Failover: &Intent{From: "a", To: "b"}}, true, v1alpha1.ReasonFailoverRunning},
		{"a planned failover", ProgressInput{PlannedTarget: "b"}, true, v1alpha1.ReasonPlannedFailoverRunning},
		{"the ordered update", ProgressInput{Updating: true}, true, v1alpha1.ReasonUpdating},
		{"a reclone", ProgressInput{Recloning: []string{"c"}}, true, v1alpha1.ReasonRecloning},
		{"an emergency failover during an update names the failover",
			ProgressInput{Failover: &Intent{From: "a", To: "b"}, Updating: true}, true, v1alpha1.ReasonFailoverRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, reason, msg := Progress(c.in)
			if got != c.want || reason != c.reason || msg == "" {
				t.Errorf("got %v %s %q, want %v %s", got, reason, msg, c.want, c.reason)
			}
		})
	}
}

// TestPrimaryFailing: primaryFailingSince is set when the active site is
// first seen failing, kept while it fails, and cleared once writable.
func TestPrimaryFailing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := now.Add(-time.Minute)
	const rw, ro, down, unknown = v1alpha1.StateWritable, v1alpha1.StateReadOnly, v1alpha1.StateUnreachable, v1alpha1.StateUnknown
	cases := []struct {
		name               string
		since              *time.Time
		state              v1alpha1.SiteState
		planned, adminFenc bool
		want               *time.Time
	}{
		{"writable: not failing", nil, rw, false, false, nil},
		{"writable again clears it", &earlier, rw, false, false, nil},
		{"first seen unreachable", nil, down, false, false, &now},
		{"still unreachable keeps the first time", &earlier, down, false, false, &earlier},
		{"read-only with no reason", nil, ro, false, false, &now},
		{"read-only drained by a planned failover", &earlier, ro, true, false, nil},
		{"read-only fenced by an administrator", nil, ro, false, true, nil},
		{"unreachable during a planned failover fails", nil, down, true, false, &now},
		{"unknown after a restart keeps what was recorded", &earlier, unknown, false, false, &earlier},
		{"unknown with nothing recorded stays unset", nil, unknown, false, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PrimaryFailing(c.since, c.state, c.planned, c.adminFenc, now)
			if (got == nil) != (c.want == nil) || (got != nil && !got.Equal(*c.want)) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
