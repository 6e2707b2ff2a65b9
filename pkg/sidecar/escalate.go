package sidecar

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A fence can fail to complete: SET GLOBAL read_only waits for the locks of
// running write statements, and a statement whose session the fence killed
// keeps its locks until its rollback ends, which for a large UPDATE takes
// minutes. Meanwhile new application connections keep writing. The operator
// does not wait that long: once the lease deadline passes (the last renewal
// + leaseTimeout + peerCheckInterval) it promotes another site. So a fence
// has a budget, Escalation.After, counted from the earlier of its first
// attempt and the lease deadline. When the budget runs out and mysqld may
// still write, the sidecar stops it: SQL SHUTDOWN first, then SIGKILL of the
// pid in mysqld's pid file. A stopped mysqld is a fenced one, because it
// always boots read_only (the rendered my.cnf says so), and only the
// operator makes it writable again.

// Escalation is the fence's time budget.
type Escalation struct {
	// After is how long a fence may keep failing before mysqld is stopped
	// (default two fifths of PeerCheckInterval).
	After time.Duration
	// ShutdownWait is how long SQL SHUTDOWN may take to end the process
	// before SIGKILL (default a fifth of PeerCheckInterval).
	ShutdownWait time.Duration
	// KillWait is how long the sidecar watches for the process to exit
	// after SIGKILL (default a fifth of PeerCheckInterval). A delivered
	// SIGKILL counts as the stop either way: the process runs no more of
	// its own code.
	KillWait time.Duration
}

func (e Escalation) withDefaults(interval time.Duration) Escalation {
	if e.After <= 0 {
		e.After = interval * 2 / 5
	}
	if e.ShutdownWait <= 0 {
		e.ShutdownWait = interval / 5
	}
	if e.KillWait <= 0 {
		e.KillWait = interval / 5
	}
	return e
}

// validate: the whole escalation must end before the operator's lease
// deadline, one PeerCheckInterval after the sidecar's own.
func (e Escalation) validate(interval time.Duration) error {
	if total := e.After + e.ShutdownWait + e.KillWait; total >= interval {
		return fmt.Errorf("fence escalation %s (after %s, shutdown %s, kill %s) not below peerCheckInterval %s: %w",
			total, e.After, e.ShutdownWait, e.KillWait, interval, ErrInvalidSettings)
	}
	return nil
}

// Ways a stop ended, the values of the mysqld_stops_total metric's label.
const (
	StopShutdown = "shutdown"
	StopKill     = "kill"
	StopFailed   = "failed"
)

var stopOutcomes = []string{StopShutdown, StopKill, StopFailed}

// StopReport is the last time the sidecar stopped mysqld, for /status.
type StopReport struct {
	At time.Time `json:"at"`
	// Reason is the fence's reason (view, lease or boot).
	Reason string `json:"reason"`
	// How is shutdown, kill or failed.
	How string `json:"how"`
	// FenceError is why the fence could not complete.
	FenceError string `json:"fenceError"`
	Error      string `json:"error,omitempty"`
}

// escState is what the escalation remembers; guarded by Runner.mu.
type escState struct {
	// failingSince is when the first attempt of the current run of failed
	// fences began; zero when the last fence held.
	failingSince time.Time
	// writableSeen is true when the last definite read saw mysqld writable;
	// writablePID is the pid its pid file named then (0 if unknown).
	writableSeen bool
	writablePID  int
	// failPID is the mysqld process the current run of failed fences
	// failed on (0: none ran, or no pid evidence); successor.go.
	failPID int
	// lastPID is the pid the last probe found, once pidSeen; freshPID is
	// a mysqld the sidecar watched start and has not read since.
	lastPID, freshPID int
	pidSeen           bool
	lastStop          *StopReport
}

// stopper is the part of pkg/mysql's Instance that asks mysqld to stop.
type stopper interface {
	Shutdown(ctx context.Context) error
}

// fenceRetryPause separates fence attempts within the budget.
const fenceRetryPause = 50 * time.Millisecond

// fenceEscalating fences within the budget and stops mysqld when the budget
// runs out (see the top of this file). Fences never overlap; a caller that
// waited while another fence held returns at once.
func (r *Runner) fenceEscalating(ctx context.Context, reason string) error {
	asked := r.cfg.Clock.Now()
	r.fenceMu.Lock()
	defer r.fenceMu.Unlock()
	r.mu.Lock()
	held := r.st.db == DBReadOnly && !r.st.lastFence.Before(asked)
	r.mu.Unlock()
	if held {
		return nil
	}
	escAt := r.escalateAt(asked)
	for {
		began := r.cfg.Clock.Now()
		deadline := began.Add(r.cfg.FenceTimeout)
		if escAt.Before(deadline) {
			deadline = escAt
		}
		err := r.fenceOnce(ctx, reason, deadline)
		if err == nil {
			r.mu.Lock()
			r.esc.failingSince, r.esc.writableSeen, r.esc.failPID = time.Time{}, false, 0
			r.mu.Unlock()
			r.keepHold(ctx) // close the READ_ONLY ADMIN gap at once
			return nil
		}
		if r.noteFailure(asked, began) {
			escAt = r.escalateAt(began) // another process: a budget of its own
		}
		if ctx.Err() != nil {
			return err
		}
		if !r.cfg.Clock.Now().Before(escAt) {
			return r.escalate(ctx, reason, err)
		}
		r.sleep(ctx, min(fenceRetryPause, r.clockUntil(escAt)))
	}
}

// escalateAt is when the budget of a fence asked for at asked runs out:
// After from the earlier of the first failed attempt and the lease
// deadline, but never less than a quarter of After from now, so the first
// attempt always gets a chance.
func (r *Runner) escalateAt(asked time.Time) time.Time {
	r.mu.Lock()
	anchor := asked
	if !r.esc.failingSince.IsZero() {
		anchor = r.esc.failingSince
	}
	if l := r.loop.LeaseDeadline(); l.Before(anchor) {
		anchor = l
	}
	r.mu.Unlock()
	after := r.cfg.Escalation.After
	return later(anchor.Add(after), asked.Add(after/4))
}

// escalate stops mysqld when the fence for reason failed with fenceErr and
// mysqld may still write. It escalates a view fence, and any fence once
// the lease has run out; a boot fence with the lease still running is only
// retried, since the operator does not count on it, unless the process
// booted with the active record set (mayactive.go).
func (r *Runner) escalate(ctx context.Context, reason string, fenceErr error) error {
	r.mu.Lock()
	leaseOver := r.loop.LeaseRemaining(r.cfg.Clock.Now()) <= 0
	// Booted with the active record set, this process cannot know when its
	// predecessor's lease ran out: a boot fence escalates as if it had.
	leaseOver = leaseOver || (reason == ReasonBoot && r.bootActive && r.loop.awaitingOperator)
	r.mu.Unlock()
	if reason != ReasonView && !leaseOver {
		return fenceErr
	}
	if !r.mayStillWrite(ctx) {
		return fenceErr
	}
	r.log.Error("fence did not complete within its budget: stopping mysqld", "reason", reason,
		"budget", r.cfg.Escalation.After, "error", fenceErr)
	r.mu.Lock()
	target := r.esc.failPID
	r.mu.Unlock()
	how, err := r.stopMySQLD(ctx, target)
	rep := &StopReport{At: r.cfg.Clock.Now(), Reason: reason, How: how, FenceError: fenceErr.Error()}
	if err != nil {
		rep.How, rep.Error = StopFailed, err.Error()
	}
	r.metrics.mysqldStops.WithLabelValues(rep.How).Inc()
	r.mu.Lock()
	r.esc.lastStop = rep
	if err == nil {
		r.st.db, r.st.dbErr, r.st.dbAt = DBDown, nil, rep.At
		r.esc.failingSince, r.esc.writableSeen, r.esc.failPID = time.Time{}, false, 0
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Error("could not stop mysqld", "reason", reason, "error", err)
		return fmt.Errorf("%w; stop mysqld: %w", fenceErr, err)
	}
	r.log.Warn("stopped mysqld: it boots fenced", "reason", reason, "how", how)
	return nil
}

// mayStillWrite tells whether mysqld may accept writes although the fence
// failed: the last definite read saw it writable and the same process still
// runs, or the reads fail while its TCP port accepts connections. Only the
// process the fences failed on is a target (successor.go): a mysqld that
// started since booted fenced, and one the sidecar watched start and has
// not read since (still starting, its port open before SQL answers) is
// left alone, as is one never seen writable and not serving (crash
// recovery).
func (r *Runner) mayStillWrite(ctx context.Context) bool {
	p := r.process()
	if p.HasPID() && !r.sameTarget() {
		return false
	}
	r.mu.Lock()
	seen, pid, db := r.esc.writableSeen, r.esc.writablePID, r.st.db
	r.mu.Unlock()
	if seen {
		if !p.HasPID() || pid == 0 {
			return true
		}
		// Its pid unread now is no proof it went: the other evidence decides.
		live := p.LivePID()
		return live == pid || (live == 0 && !r.mysqldGone(ctx))
	}
	return db == DBUnknown && p.HasTCP() && p.DialTCP(ctx) == TCPOpen
}

// stopMySQLD asks mysqld to shut down, and kills it by its pid file when it
// has not gone within ShutdownWait. It reports how it ended. target is the
// pid of the process to stop (0: unknown): once that one is gone, a
// successor the kubelet already started is neither waited for nor killed.
func (r *Runner) stopMySQLD(ctx context.Context, target int) (string, error) {
	e := r.cfg.Escalation
	start := r.cfg.Clock.Now()
	if s, ok := r.db.(stopper); ok {
		sctx, cancel := context.WithTimeout(ctx, e.ShutdownWait)
		err := s.Shutdown(sctx)
		cancel()
		if err != nil {
			r.log.Warn("SQL SHUTDOWN failed", "error", err)
		}
		if r.waitGone(ctx, target, start.Add(e.ShutdownWait)) {
			return StopShutdown, nil
		}
	}
	if !r.process().HasPID() {
		return StopFailed, fmt.Errorf("mysqld still runs %s after SHUTDOWN, and no pid file to kill it by: %w",
			r.cfg.Clock.Since(start).Round(time.Millisecond), ErrStillRunning)
	}
	if live := r.process().LivePID(); target != 0 && live != 0 && live != target {
		return StopShutdown, nil // gone at the last moment
	}
	pid, err := r.process().Kill()
	switch {
	case errors.Is(err, ErrNoProcess) && !r.mysqldGone(ctx):
		// No process to signal, yet mysqld serves: its pid file is
		// missing or names no mysqld. Nothing was stopped.
		return StopFailed, fmt.Errorf("kill mysqld: %w, yet it still serves: %w", err, ErrStillRunning)
	case err != nil && !errors.Is(err, ErrNoProcess):
		return StopFailed, err
	}
	// SIGKILL cannot be caught: once it is delivered the process never
	// runs its own code again, so it acknowledges no more commits even
	// while the kernel is still tearing it down.
	gone := r.waitGone(ctx, pid, r.cfg.Clock.Now().Add(e.KillWait))
	r.log.Warn("killed mysqld", "pid", pid, "exitSeen", gone)
	return StopKill, nil
}

// waitGone polls until mysqld (the process target, when known) is gone or
// until passes.
func (r *Runner) waitGone(ctx context.Context, target int, until time.Time) bool {
	for {
		if r.targetGone(ctx, target) {
			return true
		}
		if !r.cfg.Clock.Now().Before(until) || ctx.Err() != nil {
			return false
		}
		r.sleep(ctx, min(20*time.Millisecond, r.clockUntil(until)))
	}
}

// mysqldGone: the process evidence says so, or, with none configured, a
// status read fails as a gone server's would.
func (r *Runner) mysqldGone(ctx context.Context) bool {
	if p := r.process(); p.HasPID() || p.HasTCP() {
		return probe(ctx, p).gone(p)
	}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
	defer cancel()
	st, err := r.db.Status(sctx)
	return dbStateOf(st, err) == DBDown
}

// sleep waits d on the Runner's clock, or until ctx ends.
func (r *Runner) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := r.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}
