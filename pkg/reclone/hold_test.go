package reclone_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/reclone"
)

// TestHoldFileClosesTheStartRace: an entrypoint that looked for the hold
// file just before Stop wrote it holds the lock until its mysqld exits;
// Stop does not report mysqld stopped while it does, and an entrypoint
// that looks after Stop waits for Start.
func TestHoldFileClosesTheStartRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mysqld.hold")
	started, err := reclone.WaitHold(t.Context(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("no hold: the entrypoint waits: %v", err)
	}
	shutdowns := 0
	h := reclone.HoldFile{Path: path, Poll: 10 * time.Millisecond,
		Shutdown: func(context.Context) error { shutdowns++; return nil }}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := h.Stop(ctx); err == nil {
		t.Fatal("Stop reported mysqld stopped while a started one holds the lock")
	}
	if shutdowns != 1 || !reclone.Held(path) {
		t.Fatalf("shutdowns %d held %v, want 1 and held", shutdowns, reclone.Held(path))
	}
	_ = started.Close() // that mysqld exits
	if err := h.Stop(t.Context()); err != nil {
		t.Fatalf("Stop once mysqld exited: %v", err)
	}
	wctx, wcancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer wcancel()
	waited := false
	if _, err := reclone.WaitHold(wctx, path, 10*time.Millisecond, func() { waited = true }); !errors.Is(err, reclone.ErrHeld) || !waited {
		t.Fatalf("entrypoint while held: %v (waited %v), want ErrHeld", err, waited)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatalf("Start twice: %v", err)
	}
	lock, err := reclone.WaitHold(t.Context(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("entrypoint after Start: %v", err)
	}
	_ = lock.Close()
}

// TestHoldFileNeedsPathAndShutdown: a HoldFile missing either is refused.
func TestHoldFileNeedsPathAndShutdown(t *testing.T) {
	for name, h := range map[string]reclone.HoldFile{
		"no path":     {Shutdown: func(context.Context) error { return nil }},
		"no shutdown": {Path: filepath.Join(t.TempDir(), "hold")},
	} {
		t.Run(name, func(t *testing.T) {
			if err := h.Stop(t.Context()); !errors.Is(err, reclone.ErrInvalidConfig) {
				t.Fatalf("%v, want ErrInvalidConfig", err)
			}
		})
	}
}

// TestHoldFileRefusesAnEntrypointWithoutTheLock: a mysqld that answers
// while nobody holds the lock was not started under it; Stop refuses
// before writing the hold or asking mysqld to stop.
func TestHoldFileRefusesAnEntrypointWithoutTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mysqld.hold")
	shutdowns := 0
	h := reclone.HoldFile{Path: path, Poll: 10 * time.Millisecond,
		Shutdown: func(context.Context) error { shutdowns++; return nil },
		Answers:  func(context.Context) bool { return true }}
	if err := h.Stop(t.Context()); !errors.Is(err, reclone.ErrNotHeld) {
		t.Fatalf("%v, want ErrNotHeld", err)
	}
	if shutdowns != 0 || reclone.Held(path) {
		t.Fatalf("shutdowns %d held %v: touched", shutdowns, reclone.Held(path))
	}
	running, err := reclone.WaitHold(t.Context(), path, 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(100 * time.Millisecond); _ = running.Close() }() // it exits once asked
	if err := h.Stop(t.Context()); err != nil {
		t.Fatalf("a mysqld started under the lock: %v", err)
	}
	if shutdowns != 1 {
		t.Fatalf("shutdowns %d, want 1", shutdowns)
	}
}
