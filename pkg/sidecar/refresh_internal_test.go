package sidecar

import (
	"testing"
	"time"
)

func TestScheduleWake(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const interval, gap = 5 * time.Second, 250 * time.Millisecond
	noLease := time.Time{}
	for _, tc := range []struct {
		name string
		// last is when the last tick began (-1: none yet), next the periodic tick.
		last, next int
		pending    bool
		now        int
		lease      time.Time
		wantAt     time.Time
		wantKind   wakeKind
	}{
		{name: "idle waits for the period", last: 0, next: 5000, now: 1000, lease: noLease,
			wantAt: at(5000), wantKind: wakePeriodic},
		{name: "request well after the last tick runs at once", last: 0, next: 5000, pending: true, now: 1000,
			lease: noLease, wantAt: at(1000), wantKind: wakeRefresh},
		{name: "request right after a tick waits out the gap", last: 1000, next: 6000, pending: true, now: 1100,
			lease: noLease, wantAt: at(1250), wantKind: wakeRefresh},
		{name: "request before any tick runs at once", last: -1, next: 5000, pending: true, now: 10,
			lease: noLease, wantAt: at(10), wantKind: wakeRefresh},
		{name: "periodic tick due first answers the request", last: 4900, next: 5000, pending: true, now: 4950,
			lease: noLease, wantAt: at(5000), wantKind: wakePeriodic},
		{name: "periodic tick due with the refresh wins the tie", last: 4750, next: 5000, pending: true, now: 4800,
			lease: noLease, wantAt: at(5000), wantKind: wakePeriodic},
		{name: "lease running out first is checked first", last: 0, next: 5000, pending: true, now: 100,
			lease: at(200), wantAt: at(200), wantKind: wakeLease},
		{name: "lease already out is left to the tick", last: 0, next: 5000, now: 1000,
			lease: at(900), wantAt: at(5000), wantKind: wakePeriodic},
		{name: "overdue periodic tick runs at once", last: 0, next: 5000, now: 7000, lease: noLease,
			wantAt: at(5000), wantKind: wakePeriodic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSchedule(interval, gap, at(tc.next))
			if tc.last >= 0 {
				s.lastTick = at(tc.last)
			}
			s.pending = tc.pending
			gotAt, gotKind := s.wake(at(tc.now), tc.lease)
			if !gotAt.Equal(tc.wantAt) || gotKind != tc.wantKind {
				t.Fatalf("wake = %s at +%s, want %s at +%s", gotKind, gotAt.Sub(t0), tc.wantKind, tc.wantAt.Sub(t0))
			}
		})
	}
}

func TestScheduleRequestsAndTicks(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	const interval, gap = time.Second, 100 * time.Millisecond
	type step struct {
		op    string // "request", "tick" (a tick of the kind wake names), "wake"
		now   time.Duration
		want  bool          // request: whether it added a tick
		at    time.Duration // wake, tick: when, from t0
		kind  wakeKind
		label string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{name: "requests between two ticks make one tick", steps: []step{
			{op: "tick", now: 0, at: 0, kind: wakePeriodic},
			{op: "request", now: 10 * time.Millisecond, want: true},
			{op: "request", now: 20 * time.Millisecond, want: false},
			{op: "request", now: 30 * time.Millisecond, want: false},
			{op: "wake", now: 30 * time.Millisecond, at: gap, kind: wakeRefresh},
			{op: "tick", now: gap, at: gap, kind: wakeRefresh},
			{op: "wake", now: gap, at: interval, kind: wakePeriodic, label: "nothing pending after the refresh tick"},
		}},
		{name: "refresh tick keeps the period", steps: []step{
			{op: "tick", now: 0, at: 0, kind: wakePeriodic},
			{op: "request", now: 400 * time.Millisecond, want: true},
			{op: "tick", now: 400 * time.Millisecond, at: 400 * time.Millisecond, kind: wakeRefresh},
			{op: "wake", now: 400 * time.Millisecond, at: interval, kind: wakePeriodic},
		}},
		{name: "request during a tick makes one more after the gap", steps: []step{
			{op: "tick", now: 0, at: 0, kind: wakePeriodic},
			{op: "request", now: 50 * time.Millisecond, want: true, label: "arrived while the tick gathered"},
			{op: "wake", now: 80 * time.Millisecond, at: gap, kind: wakeRefresh},
		}},
		{name: "periodic tick answers a pending request", steps: []step{
			{op: "tick", now: 0, at: 0, kind: wakePeriodic},
			{op: "request", now: 950 * time.Millisecond, want: true},
			{op: "tick", now: 950 * time.Millisecond, at: 950 * time.Millisecond, kind: wakeRefresh},
			{op: "request", now: 960 * time.Millisecond, want: true},
			{op: "tick", now: interval, at: interval, kind: wakePeriodic},
			{op: "wake", now: interval, at: 2 * interval, kind: wakePeriodic},
		}},
		{name: "a flood ticks once per gap", steps: []step{
			{op: "tick", now: 0, at: 0, kind: wakePeriodic},
			{op: "request", now: 1 * time.Millisecond, want: true},
			{op: "tick", now: gap, at: gap, kind: wakeRefresh},
			{op: "request", now: gap + time.Millisecond, want: true},
			{op: "request", now: gap + 2*time.Millisecond, want: false},
			{op: "tick", now: 2 * gap, at: 2 * gap, kind: wakeRefresh},
			{op: "request", now: 2*gap + time.Millisecond, want: true},
			{op: "tick", now: 3 * gap, at: 3 * gap, kind: wakeRefresh},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSchedule(interval, gap, t0)
			for i, st := range tc.steps {
				now := t0.Add(st.now)
				switch st.op {
				case "request":
					if got := s.request(); got != st.want {
						t.Fatalf("step %d (%s): request = %v, want %v", i, st.label, got, st.want)
					}
				case "wake", "tick":
					at, kind := s.wake(now, time.Time{})
					if !at.Equal(t0.Add(st.at)) || kind != st.kind {
						t.Fatalf("step %d (%s): wake = %s at +%s, want %s at +%s", i, st.label, kind, at.Sub(t0), st.kind, st.at)
					}
					if st.op == "tick" {
						s.ticked(now, kind)
					}
				}
			}
		})
	}
}

func TestDefaultRefreshGap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		want     time.Duration
	}{
		{name: "default interval is capped", interval: 5 * time.Second, want: 250 * time.Millisecond},
		{name: "a tenth in between", interval: time.Second, want: 100 * time.Millisecond},
		{name: "short test interval has a floor", interval: 300 * time.Millisecond, want: 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := defaultRefreshGap(tc.interval); got != tc.want {
				t.Fatalf("defaultRefreshGap(%s) = %s, want %s", tc.interval, got, tc.want)
			}
		})
	}
}
