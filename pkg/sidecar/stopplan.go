package sidecar

import "time"

// When the kubelet terminates a site's Pod (a deletion, a drain, a
// rollout), the sidecar stops mysqld in phases that fit in stopDelay, the
// Pod's termination grace period (docs/sidecar.md, "Termination"):
//
//  1. fence: read-only, verified, before anything else, so that no write
//     is acknowledged from here on by a site that is going away;
//  2. smart: application sessions may finish (reads; writes are refused)
//     until half of stopDelay has passed, or until none is left;
//  3. fast: the sessions left are killed;
//  4. stop: SQL SHUTDOWN, a clean stop that needs no crash recovery at the
//     next start, in the time left but a margin; on MariaDB it first waits
//     until the connected replicas received the whole binary log;
//  5. kill: SIGKILL when SHUTDOWN did not end mysqld in time.
//
// A fence that fails (mysqld frozen, or its lock wait outlasting the try)
// skips the smart and fast phases: mysqld is stopped at once, and a stopped
// mysqld boots read-only. mysqld read writable again after the fence (the
// operator promoting this site meanwhile) is fenced again before anything
// else happens. The decision is StopPlan.Next, pure, time passed in.

// StopStep is what the termination does next.
type StopStep uint8

// The steps of a termination.
const (
	// StopStepFence: fence mysqld (first, and whenever it is read writable).
	StopStepFence StopStep = iota
	// StopStepDrain: wait for application sessions to end.
	StopStepDrain
	// StopStepKillSessions: kill the application sessions left.
	StopStepKillSessions
	// StopStepShutdown: ask mysqld to shut down (SQL SHUTDOWN).
	StopStepShutdown
	// StopStepWait: a shutdown is under way; watch mysqld go.
	StopStepWait
	// StopStepKill: SIGKILL mysqld.
	StopStepKill
	// StopStepDone: mysqld is gone.
	StopStepDone
)

var stopStepNames = [...]string{"fence", "drain", "kill-sessions", "shutdown", "wait", "kill", "done"}

func (s StopStep) String() string {
	if int(s) < len(stopStepNames) {
		return stopStepNames[s]
	}
	return "unknown"
}

// StopPlan is when each phase of one termination ends.
type StopPlan struct {
	// Start is when the termination began (the first SIGTERM or preStop).
	Start time.Time
	// SmartUntil ends the smart phase: half of stopDelay.
	SmartUntil time.Time
	// KillAt is when SIGKILL follows a SHUTDOWN that has not ended mysqld.
	KillAt time.Time
	// End is the kubelet's own SIGKILL, Start + stopDelay.
	End time.Time
}

// stopMargin is how much of stopDelay is kept after KillAt for the SIGKILL
// to land and the sidecar to exit before the kubelet's own SIGKILL: a
// tenth of stopDelay, within 500 ms and 3 s.
func stopMargin(stopDelay time.Duration) time.Duration {
	return min(max(stopDelay/10, 500*time.Millisecond), 3*time.Second)
}

// PlanStop lays out a termination that began at start with stopDelay.
func PlanStop(start time.Time, stopDelay time.Duration) StopPlan {
	end := start.Add(stopDelay)
	return StopPlan{Start: start, SmartUntil: start.Add(stopDelay / 2), KillAt: end.Add(-stopMargin(stopDelay)), End: end}
}

// StopState is what the termination has seen and done so far.
type StopState struct {
	// Gone: mysqld's process is gone (the process evidence says so).
	Gone bool
	// Fenced: a fence of this termination held.
	Fenced bool
	// FenceFailed: the last fence of this termination failed.
	FenceFailed bool
	// Writable: the last read saw mysqld writable.
	Writable bool
	// AppSessions is how many application sessions the last count found;
	// -1 when the count failed.
	AppSessions int
	// SessionsKilled: the fast phase ran.
	SessionsKilled bool
	// ShutdownAsked: SQL SHUTDOWN was sent (or failed to be).
	ShutdownAsked bool
	// Killed: SIGKILL was sent.
	Killed bool
}

// Next is the step to take at now.
func (p StopPlan) Next(now time.Time, s StopState) StopStep {
	switch {
	case s.Gone:
		return StopStepDone
	case s.Killed:
		return StopStepWait
	case !now.Before(p.KillAt):
		return StopStepKill
	case s.ShutdownAsked:
		return StopStepWait
	case s.FenceFailed:
		return StopStepShutdown // frozen or stuck: stop it, it boots fenced
	case !s.Fenced || s.Writable:
		return StopStepFence
	case now.Before(p.SmartUntil) && s.AppSessions != 0:
		return StopStepDrain
	case !s.SessionsKilled:
		return StopStepKillSessions
	}
	return StopStepShutdown
}
