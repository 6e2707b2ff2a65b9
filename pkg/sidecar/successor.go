package sidecar

import (
	"context"
	"time"
)

// When mysqld crashes or is restarted, only its container restarts: the
// sidecar keeps running and sees a new process, with a new pid, boot from
// the same my.cnf, which starts it read_only. A fence escalation is aimed
// at one process, the one whose fence could not complete, never at its
// successor:
//
//   - a run of failed fences (and its budget) belongs to the pid the
//     fences failed on; when the pid changes, or mysqld is read down, the
//     run ends, and fences of the next process get a budget of their own
//     (still counted from the lease deadline once the lease ran out, so a
//     lease fence ends within the operator's deadline however often
//     mysqld restarts);
//   - a process the sidecar watched start (the pid changed since the
//     previous probe) and has not read since booted read_only and is left
//     running while it starts: its TCP port opens before it answers SQL,
//     and stopping it there would crash-loop the site. Once it answers,
//     the next fence holds at once when it is read-only; a successor read
//     writable is fenced afresh, and stopped if that cannot complete;
//   - SQL SHUTDOWN and SIGKILL wait for the target pid to go, so a
//     successor the kubelet already started is not killed as "still
//     running".
//
// Without pid evidence (Process.PIDFile empty) processes cannot be told
// apart, and only a down read ends a run.

// notePID records the pid a probe found; the caller holds r.mu. A probe
// that found no pid (none runs, or the pid file or /proc could not be
// read) says nothing about which process runs: it neither ends the last
// pid nor makes the next one fresh, so a pid read that fails once between
// two reads of the same process does not pass that process for its own
// successor.
func (r *Runner) notePID(pid int) {
	if pid == 0 {
		return
	}
	if r.esc.pidSeen && pid != r.esc.lastPID {
		r.esc.freshPID = pid
	}
	r.esc.lastPID, r.esc.pidSeen = pid, true
}

// livePID probes the pid of the running mysqld and records it; 0 without
// pid evidence or when none runs.
func (r *Runner) livePID() int {
	p := r.process()
	if !p.HasPID() {
		return 0
	}
	pid := p.LivePID()
	r.mu.Lock()
	r.notePID(pid)
	r.mu.Unlock()
	return pid
}

// noteFailure records a failed fence attempt that began at began, for a
// fence asked for at asked. It reports whether the attempt starts a new
// run aimed at another process than the run before it.
func (r *Runner) noteFailure(asked, began time.Time) bool {
	pid, hasPID := r.livePID(), r.process().HasPID()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.esc.failingSince.IsZero():
		// An unread pid names no other process: the run is aimed at the
		// last one read, which may be the only read of it this run makes.
		if pid == 0 && hasPID && r.esc.pidSeen {
			pid = r.esc.lastPID
		}
		r.esc.failingSince, r.esc.failPID = asked, pid
		return false
	case pid == 0:
		return false // an unread pid is no other process: the run goes on
	case hasPID && pid != r.esc.failPID:
		r.esc.failingSince, r.esc.failPID = began, pid
		return true
	}
	return false
}

// sameTarget tells whether the mysqld running now may be the one the
// fences failed on: no live pid tells otherwise (the other evidence
// decides), or it is that pid, and not one the sidecar watched start and
// has not read since.
func (r *Runner) sameTarget() bool {
	pid := r.livePID()
	r.mu.Lock()
	defer r.mu.Unlock()
	return pid == 0 || (pid == r.esc.failPID && pid != r.esc.freshPID)
}

// targetGone: the process target no longer runs (any other pid may), or,
// with no target known, mysqld is gone (mysqldGone).
// A pid that cannot be read is not proof: then the other evidence (TCP)
// decides, as with no target.
func (r *Runner) targetGone(ctx context.Context, target int) bool {
	if target != 0 && r.process().HasPID() {
		if live := r.process().LivePID(); live != 0 {
			return live != target
		}
	}
	return r.mysqldGone(ctx)
}

// noteRead tracks whether mysqld was last seen writable, and as which pid,
// and whether it replicates (hold.go). A definite read of a process ends
// its freshness; a down read ends the run of failed fences, whose process
// is gone. The caller holds r.mu.
func (r *Runner) noteRead(state DBState, pid int, replicating bool) {
	if r.process().HasPID() {
		r.notePID(pid)
	}
	switch state {
	case DBWritable:
		r.esc.writableSeen, r.esc.writablePID = true, pid
	case DBReadOnly, DBDown:
		r.esc.writableSeen, r.esc.writablePID = false, 0
	}
	if (state == DBWritable || state == DBReadOnly) && pid == r.esc.freshPID {
		r.esc.freshPID = 0
	}
	if state == DBDown {
		r.esc.failingSince, r.esc.failPID = time.Time{}, 0
	}
	if state == DBWritable || state == DBReadOnly {
		r.hold.replicating = replicating
	}
}
