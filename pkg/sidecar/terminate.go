package sidecar

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The termination's executor; the phases and their timing are StopPlan's
// (stopplan.go).

// sessionKeeper is the part of pkg/mysql's instance that fences without
// killing the application sessions, and counts them.
type sessionKeeper interface {
	FenceKeepSessions(ctx context.Context) error
	AppSessions(ctx context.Context) (int, error)
}

// replicaWaiter is the part of pkg/mysql's instance that shuts down once
// the connected replicas hold the whole binary log (MariaDB).
type replicaWaiter interface {
	ShutdownAfterReplicas(ctx context.Context) error
}

// sessionKiller is the part of pkg/mysql's Instance that kills them.
type sessionKiller interface {
	KillAppConnections(ctx context.Context) (int, error)
}

// termination is the one termination of a Runner.
type termination struct {
	once sync.Once
	done chan struct{}
	mu   sync.Mutex // guards the fields below
	plan *StopPlan
	rep  TerminationReport
}

// TerminationReport is how the termination went, for /status and the logs.
type TerminationReport struct {
	Start time.Time `json:"start"`
	// Steps are the steps taken, in order, each once per change.
	Steps []string `json:"steps"`
	// Fenced is when the first fence held; zero when none did.
	Fenced time.Time `json:"fenced,omitempty"`
	// How mysqld ended: shutdown (it took the SQL SHUTDOWN), kill (the
	// termination's SIGKILL), gone (neither) or failed (still running at
	// the end).
	How string `json:"how,omitempty"`
	// End is when mysqld was seen gone or the plan ran out.
	End time.Time `json:"end,omitempty"`
}

// TermGone: mysqld went by itself or by another hand (a fence's
// escalation), neither by the termination's SHUTDOWN nor its SIGKILL.
const TermGone = "gone"

// pollPause separates the termination's observations.
const pollPause = 50 * time.Millisecond

// Terminating tells whether a termination has begun.
func (r *Runner) Terminating() bool {
	r.term.mu.Lock()
	defer r.term.mu.Unlock()
	return r.term.plan != nil
}

// Terminate stops mysqld in the phases of StopPlan, within StopDelay of the
// first call. Every call (the SIGTERM, the kubelet's preStop hook, a second
// SIGTERM) joins that one run: it starts it if needed, and waits until it
// ends or ctx does. It returns the report so far.
func (r *Runner) Terminate(ctx context.Context) TerminationReport {
	r.term.once.Do(func() {
		plan := PlanStop(r.cfg.Clock.Now(), r.cfg.StopDelay)
		r.term.mu.Lock()
		r.term.plan, r.term.rep.Start = &plan, plan.Start
		r.term.mu.Unlock()
		r.log.Warn("terminating: fence, drain, stop mysqld", "stopDelay", r.cfg.StopDelay,
			"smartUntil", plan.SmartUntil, "killAt", plan.KillAt)
		// Not ctx: a caller that stops waiting does not stop the run.
		go func() {
			defer close(r.term.done)
			r.terminate(context.Background(), plan)
		}()
	})
	select {
	case <-r.term.done:
	case <-ctx.Done():
	}
	return r.terminationReport()
}

func (r *Runner) terminationReport() TerminationReport {
	r.term.mu.Lock()
	defer r.term.mu.Unlock()
	rep := r.term.rep
	rep.Steps = append([]string(nil), rep.Steps...)
	return rep
}

// terminate runs plan until mysqld is gone or the plan's end passed.
func (r *Runner) terminate(ctx context.Context, plan StopPlan) {
	ctx, cancel := context.WithDeadline(ctx, plan.End)
	defer cancel()
	s := StopState{AppSessions: -1}
	last := StopStep(255)
	for {
		s.Gone = r.mysqldGone(ctx)
		step := plan.Next(r.cfg.Clock.Now(), s)
		if step != last {
			r.noteStep(step)
			last = step
		}
		if step == StopStepDone || ctx.Err() != nil {
			r.endTermination(s)
			return
		}
		r.stopStep(ctx, plan, step, &s)
	}
}

// stopStep takes one step and records what it saw in s.
func (r *Runner) stopStep(ctx context.Context, plan StopPlan, step StopStep, s *StopState) {
	switch step {
	case StopStepFence:
		err := r.stopFence(ctx, plan)
		s.Fenced, s.FenceFailed, s.Writable = s.Fenced || err == nil, err != nil, false
	case StopStepDrain:
		s.AppSessions = r.countAppSessions(ctx)
		s.Writable = r.readDB(ctx) == DBWritable
		if s.AppSessions != 0 && !s.Writable {
			r.sleep(ctx, min(4*pollPause, r.clockUntil(plan.SmartUntil)))
		}
	case StopStepKillSessions:
		if k, ok := r.db.(sessionKiller); ok {
			kctx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
			n, err := k.KillAppConnections(kctx)
			cancel()
			r.log.Info("terminating: killed the application sessions left", "killed", n, "error", err)
		}
		s.SessionsKilled = true
	case StopStepShutdown:
		if st, ok := r.db.(stopper); ok {
			do := st.Shutdown
			if w, ok := r.db.(replicaWaiter); ok && s.Fenced {
				// Fenced, the binary log no longer grows: once the replicas
				// hold it they hold every acknowledged write.
				do = w.ShutdownAfterReplicas
			}
			sctx, cancel := context.WithDeadline(ctx, plan.KillAt)
			err := do(sctx)
			cancel()
			r.log.Info("terminating: asked mysqld to shut down", "error", err)
			if err == nil {
				r.term.mu.Lock()
				r.term.rep.How = StopShutdown
				r.term.mu.Unlock()
			}
		}
		s.ShutdownAsked = true
	case StopStepWait:
		r.sleep(ctx, pollPause)
	case StopStepKill:
		pid, err := r.process().Kill()
		if errors.Is(err, ErrNoProcess) {
			r.sleep(ctx, pollPause) // no process to kill: watch it go
		}
		r.log.Warn("terminating: mysqld did not shut down in time; killed it", "pid", pid, "error", err)
		s.Killed = err == nil
		r.term.mu.Lock()
		r.term.rep.How = StopKill
		r.term.mu.Unlock()
	}
}

// stopFence fences mysqld for the termination, keeping the application
// sessions when mysqld's client can, within FenceTimeout and before KillAt.
// Like every fence it holds fenceMu, is verified, and takes the write hold.
func (r *Runner) stopFence(ctx context.Context, plan StopPlan) error {
	r.fenceMu.Lock()
	defer r.fenceMu.Unlock()
	now := r.cfg.Clock.Now()
	deadline := now.Add(r.cfg.FenceTimeout)
	if plan.KillAt.Before(deadline) {
		deadline = plan.KillAt
	}
	fctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	do := r.db.Fence
	if k, ok := r.db.(sessionKeeper); ok {
		do = k.FenceKeepSessions
	}
	err := do(fctx)
	if err == nil {
		err = r.verify(fctx)
	}
	r.mu.Lock()
	r.st.noteFence(r.cfg.Clock.Now(), ReasonStop, err)
	r.mu.Unlock()
	if err != nil {
		r.metrics.fenceErrors.Inc()
		r.log.Error("terminating: fence failed; stopping mysqld without a drain", "error", err)
		return err
	}
	r.metrics.selfFences.WithLabelValues(ReasonStop).Inc()
	r.term.mu.Lock()
	if r.term.rep.Fenced.IsZero() {
		r.term.rep.Fenced = r.cfg.Clock.Now()
	}
	r.term.mu.Unlock()
	r.keepHold(ctx)
	return nil
}

// countAppSessions is how many application sessions are left; -1 when
// unknown, which the plan treats as some.
func (r *Runner) countAppSessions(ctx context.Context) int {
	k, ok := r.db.(sessionKeeper)
	if !ok {
		return -1
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
	defer cancel()
	n, err := k.AppSessions(cctx)
	if err != nil {
		return -1
	}
	return n
}

func (r *Runner) noteStep(step StopStep) {
	r.log.Info("terminating", "step", step.String())
	r.term.mu.Lock()
	r.term.rep.Steps = append(r.term.rep.Steps, step.String())
	r.term.mu.Unlock()
}

func (r *Runner) endTermination(s StopState) {
	r.term.mu.Lock()
	defer r.term.mu.Unlock()
	rep := &r.term.rep
	rep.End = r.cfg.Clock.Now()
	switch {
	case !s.Gone:
		rep.How = StopFailed
	case rep.How == "":
		rep.How = TermGone
	}
	r.log.Warn("termination over", "how", rep.How, "mysqldGone", s.Gone, "took", rep.End.Sub(rep.Start))
}
