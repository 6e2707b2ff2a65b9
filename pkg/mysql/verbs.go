package mysql

import (
	"context"
	"fmt"
	"time"
)

// fenceAttempts bounds how often Fence retries read_only while running
// writes hold the global read lock back (each try waits lock_wait_timeout).
const fenceAttempts = 3

func (in *instance) Status(ctx context.Context) (Status, error) {
	var st Status
	err := in.run(ctx, "status", 0, func(ctx context.Context, ex executor, d dialect) error {
		var err error
		st, err = d.status(ctx, ex)
		return err
	})
	return st, err
}

func (in *instance) Fence(ctx context.Context) error {
	return in.run(ctx, "fence", 0, in.fence)
}

func (in *instance) fence(ctx context.Context, ex executor, d dialect) error {
	return in.barrier(ctx, ex, d, true)
}

// FenceKeepSessions is Fence without its final kill of application
// sessions: the read-only barrier is set (writers that hold it back past
// lock_wait_timeout are still killed, as in Fence) and verified, and the
// sessions that remain may finish their reads. The sidecar's smart
// shutdown uses it; it is not part of Instance.
func (in *instance) FenceKeepSessions(ctx context.Context) error {
	return in.run(ctx, "fence keeping sessions", 0, func(ctx context.Context, ex executor, d dialect) error {
		return in.barrier(ctx, ex, d, false)
	})
}

// AppSessions counts the application sessions KillAppConnections would
// kill; not part of Instance.
func (in *instance) AppSessions(ctx context.Context) (int, error) {
	n := 0
	err := in.run(ctx, "count app sessions", 0, func(ctx context.Context, ex executor, d dialect) error {
		sessions, err := d.sessions(ctx, ex)
		for _, s := range sessions {
			if isApp(s, in.cfg) {
				n++
			}
		}
		return err
	})
	return n, err
}

// barrier sets the read-only barrier and verifies it; kill also ends every
// application session once it holds.
func (in *instance) barrier(ctx context.Context, ex executor, d dialect, kill bool) error {
	if err := d.setLockWaitTimeout(ctx, ex, in.lockWaitSeconds()); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := d.setFenced(ctx, ex, true)
		if err == nil {
			break
		}
		if serverErrno(err) != errLockWaitTimeout || attempt == fenceAttempts {
			return fmt.Errorf("set read-only (attempt %d): %w", attempt, err)
		}
		// A running write holds the barrier back: end the writers, retry.
		if _, err := in.killApp(ctx, ex, d); err != nil {
			return err
		}
	}
	if kill {
		if _, err := in.killApp(ctx, ex, d); err != nil {
			return err
		}
	}
	fenced, _, err := d.readOnly(ctx, ex)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !fenced {
		return fmt.Errorf("%w: still writable after setting read-only", ErrFenceNotVerified)
	}
	return nil
}

// Unfence is ordered with a salvage into this server (topolock.go): under
// the topology lock, a server that replicates (a salvage started into it,
// whose old tail would apply on top of its new writes) is refused with
// ErrUnfenceReplicating and left read-only. Promote, not Unfence, makes a
// replica writable.
func (in *instance) Unfence(ctx context.Context) error {
	return in.run(ctx, "unfence", 0, func(ctx context.Context, ex executor, d dialect) error {
		unlock, err := lockTopology(ctx, ex, in.lockWaitSeconds(), in.lockIdleSeconds())
		if err != nil {
			return err
		}
		defer unlock()
		rs, err := d.replicaStatus(ctx, ex)
		if err != nil {
			return fmt.Errorf("read replication: %w", err)
		}
		if rs != nil && (rs.SQLRunning || rs.IORunning != ThreadNo) {
			return fmt.Errorf("%w: from %s (IO %s, SQL running %v)", ErrUnfenceReplicating,
				rs.Source(), rs.IORunning, rs.SQLRunning)
		}
		return makeWritable(ctx, ex, d)
	})
}

func makeWritable(ctx context.Context, ex executor, d dialect) error {
	if err := d.setFenced(ctx, ex, false); err != nil {
		return fmt.Errorf("clear read-only: %w", err)
	}
	_, writable, err := d.readOnly(ctx, ex)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !writable {
		return fmt.Errorf("%w: still read-only", ErrWritableNotVerified)
	}
	return nil
}

func (in *instance) KillAppConnections(ctx context.Context) (int, error) {
	var n int
	err := in.run(ctx, "kill app connections", 0, func(ctx context.Context, ex executor, d dialect) error {
		var err error
		n, err = in.killApp(ctx, ex, d)
		return err
	})
	return n, err
}

func (in *instance) killApp(ctx context.Context, ex executor, d dialect) (int, error) {
	sessions, err := d.sessions(ctx, ex)
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, s := range sessions {
		if !isApp(s, in.cfg) {
			continue
		}
		err := d.kill(ctx, ex, s.ID)
		if serverErrno(err) == errNoSuchThread {
			continue // it ended by itself meanwhile
		}
		if err != nil {
			return killed, fmt.Errorf("kill connection %d of %q: %w", s.ID, s.User, err)
		}
		killed++
	}
	return killed, nil
}

// lockWaitSeconds is Config.LockWaitTimeout in whole seconds, at least one
// (MariaDB's lock_wait_timeout takes no fractions).
func (in *instance) lockWaitSeconds() int {
	return max(1, int(in.cfg.LockWaitTimeout/time.Second))
}

// lockIdleSeconds bounds the topology lock's session idle time
// (topolock.go): the lock wait, one call's read timeout, and a margin.
func (in *instance) lockIdleSeconds() int {
	return in.lockWaitSeconds() + int((in.cfg.ReadTimeout+time.Second-1)/time.Second) + lockIdleMargin
}
