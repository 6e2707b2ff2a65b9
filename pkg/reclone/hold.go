package reclone

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// A hold file is how the sidecar stops and starts the mysqld of its Pod,
// whose process it does not own (docs/recovery.md, "Stopping mysqld"):
//
//   - the mysqld container's entrypoint takes a shared lock on the lock
//     file (LockPath) and, while the hold file exists, lets it go, waits
//     and tries again; once the file is absent it starts mysqld, which
//     inherits the locked descriptor and so holds the lock while it runs
//     (WaitHold does all of this for an entrypoint written in Go);
//   - Stop writes the hold file, shuts mysqld down, and waits until it can
//     take the lock exclusively: then no mysqld runs, and any entrypoint
//     that starts later sees the file, since it looks only under the lock;
//   - Start removes the hold file: the next start of the container (the
//     kubelet restarts it) or the waiting entrypoint starts mysqld.
//
// The lock closes the gap a file alone leaves: an entrypoint that looked
// for the file just before it was written would start mysqld after Stop
// saw none running.

// LockPath is the lock file that goes with the hold file at path.
func LockPath(hold string) string { return hold + ".lock" }

// HoldFile stops and starts mysqld through a hold file; it is the
// Executor's Mysqld in a Pod.
type HoldFile struct {
	// Path is the hold file, on a volume both containers mount.
	Path string
	// Shutdown asks mysqld to stop (SQL SHUTDOWN); an error is ignored
	// when mysqld is gone anyway.
	Shutdown func(ctx context.Context) error
	// Answers, when set, tells whether mysqld answers SQL: a mysqld that
	// answers while the lock is free was not started under the lock (its
	// entrypoint does not honour the hold file), and Stop refuses it.
	Answers func(ctx context.Context) bool
	// Poll paces the wait for the lock (default 200 ms).
	Poll time.Duration
}

// Stop writes the hold file, shuts mysqld down and waits, bounded by ctx,
// until no mysqld runs. Stopping a held, stopped mysqld returns at once.
func (h HoldFile) Stop(ctx context.Context) error {
	if h.Path == "" || h.Shutdown == nil {
		return fmt.Errorf("%w: HoldFile needs Path and Shutdown", ErrInvalidConfig)
	}
	lock, err := os.OpenFile(LockPath(h.Path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("reclone: mysqld's lock file: %w", err)
	}
	defer func() { _ = lock.Close() }()
	if err := h.lockHonoured(ctx, lock); err != nil {
		return err
	}
	if err := writeHold(h.Path); err != nil {
		return err
	}
	asked := false
	for {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Let go at once: entrypoints then find the hold file.
			return syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("reclone: lock %s: %w", lock.Name(), err)
		}
		if !asked {
			_ = h.Shutdown(ctx) // a mysqld already stopping may drop the connection
			asked = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reclone: mysqld still runs after SHUTDOWN: %w", ctx.Err())
		case <-time.After(orDefault(h.Poll, 200*time.Millisecond)):
		}
	}
}

// lockHonoured refuses, before anything is written, a mysqld that answers
// while nobody holds the lock: a hold would not keep it from restarting.
func (h HoldFile) lockHonoured(ctx context.Context, lock *os.File) error {
	if h.Answers == nil || Held(h.Path) {
		return nil
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // held by a running mysqld, as it should be
	}
	_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if h.Answers(ctx) {
		return fmt.Errorf("%w: mysqld answers without holding %s", ErrNotHeld, lock.Name())
	}
	return nil
}

// Start removes the hold file; the entrypoint then starts mysqld. The
// Executor waits for it to answer.
func (h HoldFile) Start(context.Context) error {
	if err := os.Remove(h.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reclone: remove the hold file: %w", err)
	}
	return nil
}

// Held reports whether the hold file at path exists.
func Held(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeHold writes the hold file durably: a hold lost in a crash of the
// node would let mysqld start on a datadir being moved.
func writeHold(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("reclone: write the hold file: %w", err)
	}
	_, err = fmt.Fprintf(f, "mysqld is held by the sidecar for a reclone since %s\n", time.Now().UTC().Format(time.RFC3339))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reclone: write the hold file: %w", err)
	}
	return nil
}

// WaitHold is the entrypoint's half: it returns the lock file, locked
// shared, once the hold file at path is absent. The caller starts mysqld
// with the descriptor inherited (exec keeps it open: it is not
// close-on-exec) so that mysqld holds the lock while it runs. It waits
// while the file exists, bounded by ctx (ErrHeld); onWait, when set, is
// called once when it has to wait.
func WaitHold(ctx context.Context, path string, poll time.Duration, onWait func()) (*os.File, error) {
	lock, err := os.OpenFile(LockPath(path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reclone: mysqld's lock file: %w", err)
	}
	waited := false
	for {
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
			_ = lock.Close()
			return nil, fmt.Errorf("reclone: lock %s: %w", lock.Name(), err)
		}
		if !Held(path) {
			// Kept open across exec: mysqld holds the lock while it runs.
			if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, lock.Fd(), syscall.F_SETFD, 0); e != 0 {
				_ = lock.Close()
				return nil, fmt.Errorf("reclone: lock %s: keep across exec: %w", lock.Name(), e)
			}
			return lock, nil
		}
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		if !waited && onWait != nil {
			onWait()
		}
		waited = true
		select {
		case <-ctx.Done():
			_ = lock.Close()
			return nil, fmt.Errorf("%w: %s: %w", ErrHeld, path, ctx.Err())
		case <-time.After(orDefault(poll, time.Second)):
		}
	}
}
