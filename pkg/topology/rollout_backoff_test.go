package topology

import (
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestSwitchoverRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want time.Duration
	}{
		{"first failure: a minute", 1, time.Minute},
		{"second: two", 2, 2 * time.Minute},
		{"fourth: eight", 4, 8 * time.Minute},
		{"fifth: sixteen", 5, 16 * time.Minute},
		{"far beyond: bounded", 40, 16 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SwitchoverRetryDelay(tc.n); got != tc.want {
				t.Fatalf("SwitchoverRetryDelay(%d) = %s, want %s", tc.n, got, tc.want)
			}
		})
	}
}

func TestNoteSwitchoverFailure(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	one := SwitchoverFailures{Count: 1, LastAt: t0, Last: "LagTimeout"}
	for _, tc := range []struct {
		name     string
		prev     SwitchoverFailures
		failedAt time.Time
		want     SwitchoverFailures
	}{
		{"no failure: unchanged", one, time.Time{}, one},
		{"the same failure read again (a restart, the next pass): counted once", one, t0, one},
		{"the same failure, status's copy to the second: counted once", one, t0.Add(400 * time.Millisecond), one},
		{"a new failure: counted", one, t0.Add(time.Minute),
			SwitchoverFailures{Count: 2, LastAt: t0.Add(time.Minute), Last: "FenceFailed"}},
		{"an old failure the last update already saw: not counted again", SwitchoverFailures{LastAt: t0}, t0,
			SwitchoverFailures{LastAt: t0}},
		{"the first failure", SwitchoverFailures{}, t0, SwitchoverFailures{Count: 1, LastAt: t0, Last: "FenceFailed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoteSwitchoverFailure(tc.prev, tc.failedAt, "FenceFailed"); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A failing switchover is retried with a growing wait, and after
// MaxSwitchoverFailures in a row not at all: the update waits for a person
// and is stalled; the count is kept until the update ends.
func TestPlanRolloutSwitchoverBackoff(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	stale := func(s RolloutSite) RolloutSite { s.Stale = true; return s }
	in := func(n int, ago time.Duration) RolloutInput {
		return RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Phase: v1alpha1.GroupPhaseUpdating,
			Sites: []RolloutSite{stale(back("iad")), back("pdx")}, Decision: KindHealthy, MaxLag: 30 * time.Second,
			PeerCheckInterval: 2 * time.Second, Now: now, ProgressAt: now.Add(-time.Minute),
			ProgressDeadline: time.Hour,
			Switchover:       SwitchoverFailures{Count: n, LastAt: now.Add(-ago), Last: "LagTimeout"}}
	}
	tests := []struct {
		name    string
		in      RolloutInput
		action  RolloutAction
		phase   v1alpha1.GroupPhase
		stalled string
		message string
	}{
		{"no failure: switch over", in(0, 0), RolloutSwitchover, v1alpha1.GroupPhaseUpdating, "", "switching the primary iad over to pdx"},
		{"one failure 30s ago: wait a minute", in(1, 30*time.Second), RolloutWait, v1alpha1.GroupPhaseUpdating, "",
			"retrying after 2026-11-24T10:00:30Z"},
		{"one failure 61s ago: retry", in(1, 61*time.Second), RolloutSwitchover, v1alpha1.GroupPhaseUpdating, "", ""},
		{"three failures 3m ago: wait four", in(3, 3*time.Minute), RolloutWait, v1alpha1.GroupPhaseUpdating, "",
			"3 of 5 in a row"},
		{"three failures 5m ago: retry", in(3, 5*time.Minute), RolloutSwitchover, v1alpha1.GroupPhaseUpdating, "", ""},
		{"four failures 7m ago: wait eight", in(4, 7*time.Minute), RolloutWait, v1alpha1.GroupPhaseUpdating, "", ""},
		{"five failures: not retried, waits for a person, stalled",
			in(MaxSwitchoverFailures, time.Hour), RolloutWaitForUser, v1alpha1.GroupPhaseWaitingForUser,
			v1alpha1.ReasonSwitchoverRetriesExhausted, "failed 5 times in a row (last: LagTimeout) and is not retried"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanRollout(tc.in)
			if got.Action != tc.action || got.Phase != tc.phase || got.StalledReason != tc.stalled ||
				got.Stalled != (tc.stalled != "") {
				t.Fatalf("got %+v, want %s phase %q stalled %q", got, tc.action, tc.phase, tc.stalled)
			}
			if !strings.Contains(got.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", got.Message, tc.message)
			}
			if got.Switchover != tc.in.Switchover {
				t.Errorf("count became %+v, want it kept while the update goes on", got.Switchover)
			}
			if tc.stalled != "" && (!got.ProgressAt.Equal(tc.in.ProgressAt) ||
				!strings.Contains(got.StalledMessage, "kubectl annotate mfg orders -n shop")) {
				t.Errorf("stalled step: progress %s, condition %q", got.ProgressAt, got.StalledMessage)
			}
		})
	}
	t.Run("the update ends: the count is cleared, the last failure's time kept", func(t *testing.T) {
		i := in(MaxSwitchoverFailures, time.Hour)
		i.Sites = []RolloutSite{back("iad"), back("pdx")}
		got := PlanRollout(i)
		if got.Action != RolloutIdle || got.Switchover.Count != 0 || !got.Switchover.LastAt.Equal(i.Switchover.LastAt) {
			t.Fatalf("got %+v", got)
		}
	})
}

// TestSwitchoverBackoffDistrustsEditedStatus: a negative failure count (an
// edited status) still reaches the cap after MaxSwitchoverFailures more
// failures, and a last failure in the future (an edit, a clock stepped
// back) holds nothing, while the next failure still counts.
func TestSwitchoverBackoffDistrustsEditedStatus(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	t.Run("a negative count", func(t *testing.T) {
		f := SwitchoverFailures{Count: -1000, LastAt: now.Add(-time.Hour), Last: "edited"}
		for i := 1; i <= MaxSwitchoverFailures; i++ {
			now = now.Add(time.Hour)
			f = NoteSwitchoverFailure(f, now, "failed")
		}
		step, held := switchoverBackoff(RolloutInput{ActiveSite: "iad", Switchover: f, Now: now.Add(time.Hour)}, "pdx", "")
		if !held || !step.Stalled || f.Count != MaxSwitchoverFailures {
			t.Fatalf("after %d failures from an edited count: count %d, step %+v", MaxSwitchoverFailures, f.Count, step)
		}
	})
	t.Run("a last failure in the future", func(t *testing.T) {
		f := SwitchoverFailures{Count: 1, LastAt: now.AddDate(10, 0, 0), Last: "edited"}
		if _, held := switchoverBackoff(RolloutInput{ActiveSite: "iad", Switchover: f, Now: now}, "pdx", ""); held {
			t.Fatal("held until a failure time ten years ahead")
		}
		f = NoteSwitchoverFailure(f, now, "failed")
		if f.Count != 2 || !f.LastAt.Equal(now) {
			t.Fatalf("a failure before the edited time was not counted: %+v", f)
		}
		if _, held := switchoverBackoff(RolloutInput{ActiveSite: "iad", Switchover: f, Now: now}, "pdx", ""); !held {
			t.Fatal("the back-off after a counted failure does not hold")
		}
	})
}
