package sidecar

import (
	"testing"
	"time"
)

func TestPlanStop(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		stopDelay            time.Duration
		smart, killAt, ended time.Duration // from the start
	}{
		{"default 30s: half smart, 3s margin", 30 * time.Second, 15 * time.Second, 27 * time.Second, 30 * time.Second},
		{"the minimum 5s: a 500ms margin", 5 * time.Second, 2500 * time.Millisecond, 4500 * time.Millisecond, 5 * time.Second},
		{"a long one keeps 3s", 10 * time.Minute, 5 * time.Minute, 10*time.Minute - 3*time.Second, 10 * time.Minute},
		{"a tenth between the bounds", 20 * time.Second, 10 * time.Second, 18 * time.Second, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanStop(t0, tc.stopDelay)
			if p.SmartUntil != t0.Add(tc.smart) || p.KillAt != t0.Add(tc.killAt) || p.End != t0.Add(tc.ended) {
				t.Fatalf("plan %+v, want smart %s kill %s end %s", p, tc.smart, tc.killAt, tc.ended)
			}
		})
	}
}

func TestStopPlanNext(t *testing.T) {
	p := PlanStop(t0, 30*time.Second) // smart until 15s, kill at 27s
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	fenced := StopState{Fenced: true, AppSessions: 2}
	with := func(s StopState, f func(*StopState)) StopState { f(&s); return s }
	for _, tc := range []struct {
		name string
		now  time.Time
		s    StopState
		want StopStep
	}{
		{"the fence comes first", at(0), StopState{AppSessions: -1}, StopStepFence},
		{"the fence comes first even with no session", at(0), StopState{}, StopStepFence},
		{"fenced, sessions left: drain", at(1), fenced, StopStepDrain},
		{"fenced, count failed: drain", at(1), with(fenced, func(s *StopState) { s.AppSessions = -1 }), StopStepDrain},
		{"fenced, no session left: no wait, no kill needed but run it", at(1),
			with(fenced, func(s *StopState) { s.AppSessions = 0 }), StopStepKillSessions},
		{"smart phase over: kill the sessions left", at(15), fenced, StopStepKillSessions},
		{"sessions killed: shut down", at(15.1), with(fenced, func(s *StopState) { s.SessionsKilled = true }), StopStepShutdown},
		{"shutdown asked: wait", at(20), with(fenced, func(s *StopState) { s.SessionsKilled, s.ShutdownAsked = true, true }), StopStepWait},
		{"shutdown too slow: SIGKILL at the margin", at(27),
			with(fenced, func(s *StopState) { s.SessionsKilled, s.ShutdownAsked = true, true }), StopStepKill},
		{"killed: wait for it to go", at(28), with(fenced, func(s *StopState) { s.Killed = true }), StopStepWait},
		{"gone: done", at(3), with(fenced, func(s *StopState) { s.Gone = true }), StopStepDone},
		{"gone before anything: done", at(0), StopState{Gone: true}, StopStepDone},
		{"read writable after the fence (promoted meanwhile): fence again", at(5),
			with(fenced, func(s *StopState) { s.Writable = true }), StopStepFence},
		{"writable again after the sessions were killed: fence before SHUTDOWN", at(16),
			with(fenced, func(s *StopState) { s.Writable, s.SessionsKilled = true, true }), StopStepFence},
		{"fence failed (frozen): stop at once, no drain", at(1), StopState{FenceFailed: true, AppSessions: 3}, StopStepShutdown},
		{"fence failed, shutdown sent: wait", at(2), StopState{FenceFailed: true, ShutdownAsked: true}, StopStepWait},
		{"fence failed past the margin: SIGKILL", at(27.5), StopState{FenceFailed: true}, StopStepKill},
		{"never fenced at the margin: SIGKILL, never left running", at(27), StopState{}, StopStepKill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Next(tc.now, tc.s); got != tc.want {
				t.Fatalf("Next = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLiveness(t *testing.T) {
	const delay = 30 * time.Second
	in := func(f func(*LiveInput)) LiveInput {
		l := LiveInput{Now: t0.Add(10 * time.Second), Since: t0, StartDelay: delay, HasPID: true, PID: 42, TCP: TCPRefused}
		f(&l)
		return l
	}
	for _, tc := range []struct {
		name string
		in   LiveInput
		ok   bool
		why  string
	}{
		{"answers SQL", in(func(l *LiveInput) { l.Answered, l.TCP = true, TCPNone }), true, LiveAnswered},
		{"frozen: port open, no answer", in(func(l *LiveInput) { l.TCP = TCPOpen }), false, LiveNoAnswer},
		{"frozen within startDelay still fails", in(func(l *LiveInput) { l.TCP, l.Now = TCPOpen, t0 }), false, LiveNoAnswer},
		{"crash recovery within startDelay: process, port refused", in(func(*LiveInput) {}), true, LiveStarting},
		{"crash recovery, no pid file yet", in(func(l *LiveInput) { l.PID = 0 }), true, LiveStarting},
		{"crash recovery, the dial timed out", in(func(l *LiveInput) { l.TCP = TCPUnknown }), true, LiveStarting},
		{"no TCP evidence configured, within startDelay", in(func(l *LiveInput) { l.TCP = TCPNone }), true, LiveStarting},
		{"not accepting past startDelay", in(func(l *LiveInput) { l.Now = t0.Add(delay) }), false, LiveStartTooLong},
		{"held for a reclone past startDelay", in(func(l *LiveInput) { l.Held, l.PID, l.Now = true, 0, t0.Add(time.Hour) }),
			true, LiveHeld},
		{"held but frozen: port open, no answer", in(func(l *LiveInput) { l.Held, l.TCP = true, TCPOpen }), false, LiveNoAnswer},
		{"terminating: the sidecar stops it, never the kubelet",
			in(func(l *LiveInput) { l.Terminating, l.TCP = true, TCPOpen }), true, LiveTerminating},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := Liveness(tc.in)
			if ok != tc.ok || why != tc.why {
				t.Fatalf("Liveness = %v %q, want %v %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}
