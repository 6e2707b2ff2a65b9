package topology

import (
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestPlanRolloutStalled(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	const deadline = 10 * time.Minute
	back := func(name string) RolloutSite {
		v := SiteView{Name: name, State: v1alpha1.StateReadOnly, Replication: Replication{Running: true}}
		if name == "iad" {
			v = SiteView{Name: name, State: v1alpha1.StateWritable}
		}
		return RolloutSite{View: v, Exists: true, PodReady: true, SidecarAskedAt: now.Add(-time.Second)}
	}
	stale := func(s RolloutSite) RolloutSite { s.Stale = true; return s }
	// never is a restarted site whose new Pod never becomes Ready.
	never := func(s RolloutSite) RolloutSite {
		s.PodReady, s.View.State = false, v1alpha1.StateUnreachable
		return s
	}
	drOnly := func(s RolloutSite) RolloutSite { s.View.Role = v1alpha1.RoleDROnly; return s }
	// updating is an update in progress that last took a step ago.
	updating := func(ago time.Duration, sites ...RolloutSite) RolloutInput {
		in := RolloutInput{Namespace: "shop", Group: "orders", ActiveSite: "iad", Sites: sites, Decision: KindDegraded,
			MaxLag: 30 * time.Second, PeerCheckInterval: 2 * time.Second, Now: now, Phase: v1alpha1.GroupPhaseUpdating,
			ProgressDeadline: deadline}
		if ago >= 0 {
			in.ProgressAt = now.Add(-ago)
		}
		return in
	}
	with := func(i RolloutInput, f func(*RolloutInput)) RolloutInput { f(&i); return i }
	tests := []struct {
		name     string
		in       RolloutInput
		action   RolloutAction
		progress time.Time // the step's ProgressAt
		stalled  bool
		message  string // a part of the stalled message
	}{
		{"a restarted replica not back within the deadline: waiting, not stalled",
			updating(9*time.Minute, stale(back("iad")), never(back("pdx")), stale(back("fra"))),
			RolloutWait, now.Add(-9 * time.Minute), false, ""},
		{"a restarted replica not back past the deadline: stalled, the clock kept",
			updating(11*time.Minute, stale(back("iad")), never(back("pdx")), stale(back("fra"))),
			RolloutWait, now.Add(-11 * time.Minute), true, "waiting for pdx to be Ready"},
		{"the last restarted site never back: stalled although nothing is stale",
			updating(time.Hour, back("iad"), never(back("pdx"))),
			RolloutWait, now.Add(-time.Hour), true, "waiting for pdx"},
		{"no replica to switch the primary to: stalled",
			updating(11*time.Minute, stale(back("iad")), drOnly(back("pdx"))),
			RolloutWait, now.Add(-11 * time.Minute), true, "no updated, caught-up primary-candidate"},
		{"the update's switchover keeps failing: stalled",
			with(updating(11*time.Minute, stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Switchover = SwitchoverFailures{Count: 1, LastAt: now.Add(-10 * time.Second), Last: "lag timeout"}
			}),
			RolloutWait, now.Add(-11 * time.Minute), true, "failed (lag timeout; 1 of 5 in a row)"},
		{"retrying a failed switchover is no progress: the clock keeps running",
			with(updating(11*time.Minute, stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Switchover = SwitchoverFailures{Count: 1, LastAt: now.Add(-2 * SwitchoverRetry), Last: "lag timeout"}
			}),
			RolloutSwitchover, now.Add(-11 * time.Minute), true, "switching the primary iad over to pdx"},
		{"retrying a failed switchover within the deadline: not stalled yet",
			with(updating(3*time.Minute, stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Switchover = SwitchoverFailures{Count: 1, LastAt: now.Add(-2 * SwitchoverRetry), Last: "lag timeout"}
			}),
			RolloutSwitchover, now.Add(-3 * time.Minute), false, ""},
		{"a step restarts the clock, however long the wait before",
			updating(time.Hour, stale(back("iad")), back("pdx"), stale(back("fra"))),
			RolloutUpdate, now, false, ""},
		{"the update's switchover is a step",
			updating(time.Hour, stale(back("iad")), back("pdx")),
			RolloutSwitchover, now, false, ""},
		{"the update begins: the clock starts",
			with(updating(-1, stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) { i.Phase = v1alpha1.GroupPhaseNone }),
			RolloutUpdate, now, false, ""},
		{"an update without a recorded time (an older operator ran it): the clock starts now",
			updating(-1, stale(back("iad")), never(back("pdx")), stale(back("fra"))),
			RolloutWait, now, false, ""},
		{"a failover holds a stalled update back: the clock does not restart",
			with(updating(11*time.Minute, stale(back("iad")), never(back("pdx")), stale(back("fra"))), func(i *RolloutInput) {
				i.PlannedRequested = true
			}),
			RolloutWait, now.Add(-11 * time.Minute), true, "a planned failover is in flight"},
		{"a failover before the update began: no update, no clock",
			with(updating(-1, stale(back("iad")), stale(back("pdx"))), func(i *RolloutInput) {
				i.Phase, i.EmergencyInFlight = v1alpha1.GroupPhaseNone, true
			}),
			RolloutWait, time.Time{}, false, ""},
		{"waiting for a person is not stalled",
			with(updating(time.Hour, stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Strategy, i.Phase = v1alpha1.UpdateSupervised, v1alpha1.GroupPhaseWaitingForUser
			}),
			RolloutWaitForUser, now, false, ""},
		{"the person's switchover runs long in WaitingForUser: not stalled",
			with(updating(time.Hour, stale(back("iad")), back("pdx")), func(i *RolloutInput) {
				i.Strategy, i.Phase, i.PlannedRequested = v1alpha1.UpdateSupervised, v1alpha1.GroupPhaseWaitingForUser, true
			}),
			RolloutWait, now.Add(-time.Hour), false, ""},
		{"the update ends: the clock is cleared",
			updating(time.Hour, back("iad"), back("pdx")),
			RolloutIdle, time.Time{}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanRollout(tc.in)
			if got.Action != tc.action || !got.ProgressAt.Equal(tc.progress) || got.Stalled != tc.stalled {
				t.Fatalf("got %s progress %s stalled %v (%q), want %s progress %s stalled %v", got.Action,
					got.ProgressAt, got.Stalled, got.Message, tc.action, tc.progress, tc.stalled)
			}
			if !tc.stalled {
				if got.StalledMessage != "" || strings.HasPrefix(got.Message, "stalled") {
					t.Fatalf("not stalled, yet the messages say so: %q / %q", got.Message, got.StalledMessage)
				}
				return
			}
			if !strings.Contains(got.StalledMessage, tc.message) || !strings.Contains(got.StalledMessage, "planned failovers") ||
				!strings.HasPrefix(got.Message, "stalled, no step since ") || got.Phase != v1alpha1.GroupPhaseUpdating {
				t.Fatalf("stalled step: phase %q message %q, condition message %q (want it to contain %q)",
					got.Phase, got.Message, got.StalledMessage, tc.message)
			}
		})
	}
}

func TestRolloutDeadline(t *testing.T) {
	tests := []struct {
		name                    string
		configured, start, stop time.Duration
		want                    time.Duration
	}{
		{"omitted: ten minutes", 0, 30 * time.Second, 30 * time.Second, 10 * time.Minute},
		{"configured", 3 * time.Minute, 30 * time.Second, 30 * time.Second, 3 * time.Minute},
		{"never shorter than a restart may take", 2 * time.Minute, 2 * time.Hour, time.Minute, 2*time.Hour + time.Minute},
		{"the default too", 0, 20 * time.Minute, 30 * time.Second, 20*time.Minute + 30*time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RolloutDeadline(tc.configured, tc.start, tc.stop); got != tc.want {
				t.Fatalf("RolloutDeadline = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestUpdateStalled(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		phase    v1alpha1.GroupPhase
		progress time.Time
		want     bool
	}{
		{"updating, past the deadline", v1alpha1.GroupPhaseUpdating, now.Add(-11 * time.Minute), true},
		{"updating, at the deadline", v1alpha1.GroupPhaseUpdating, now.Add(-10 * time.Minute), false},
		{"updating, within", v1alpha1.GroupPhaseUpdating, now.Add(-time.Minute), false},
		{"updating, no time recorded", v1alpha1.GroupPhaseUpdating, time.Time{}, false},
		{"waiting for a person", v1alpha1.GroupPhaseWaitingForUser, now.Add(-time.Hour), false},
		{"no update", v1alpha1.GroupPhaseNone, now.Add(-time.Hour), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpdateStalled(tc.phase, tc.progress, 10*time.Minute, now); got != tc.want {
				t.Fatalf("UpdateStalled = %v, want %v", got, tc.want)
			}
		})
	}
}
