package sidecar

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// blockingExec stands in for syscall.Exec: it signals entered, waits for
// release and fails, so the process goes on.
type blockingExec struct {
	entered, release chan struct{}
	mu               sync.Mutex
	calls            int
}

func newBlockingExec() *blockingExec {
	return &blockingExec{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (e *blockingExec) exec(string, []string, []string) error {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	e.entered <- struct{}{}
	<-e.release
	return os.ErrPermission
}

func (e *blockingExec) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestUpgradeRacingTheTermination: the attacker's interleavings of an
// accepted upgrade and the Pod's termination. The exec and the start of
// the termination exclude each other: a termination that began before the
// exec stops it, and one that begins while the exec is under way runs in
// full when the exec fails. Either way the fence comes first and mysqld
// is shut down by the termination.
func TestUpgradeRacingTheTermination(t *testing.T) {
	t.Run("the termination begins between the accept and the exec", func(t *testing.T) {
		db := &lifeDB{writable: true}
		ex := newBlockingExec()
		close(ex.release)
		r := lifeRunner(t, db, Config{StopDelay: 2 * time.Second, Upgrade: Upgrade{Exec: ex.exec, Args: []string{"sidecar"}}})
		if err := r.lockForExec(); err != nil {
			t.Fatal(err)
		}
		done := make(chan TerminationReport, 1)
		go func() { done <- r.Terminate(context.Background()) }()
		waitFor(t, "the termination to begin", r.Terminating)
		r.reexec(httptest.NewRecorder(), "/nonexistent/sidecar")
		if n := ex.count(); n != 0 {
			t.Fatalf("exec ran %d times after the termination began", n)
		}
		rep := <-done
		if got := db.events(); len(got) == 0 || got[0] != "fence (writable)" && got[0] != "fence" || rep.How != StopShutdown {
			t.Fatalf("events %q, report %+v: the termination did not run in full", got, rep)
		}
	})
	t.Run("the termination begins while the exec is under way", func(t *testing.T) {
		db := &lifeDB{writable: true}
		ex := newBlockingExec()
		r := lifeRunner(t, db, Config{StopDelay: 2 * time.Second, Upgrade: Upgrade{Exec: ex.exec, Args: []string{"sidecar"}}})
		if err := r.lockForExec(); err != nil {
			t.Fatal(err)
		}
		go r.reexec(httptest.NewRecorder(), "/nonexistent/sidecar")
		<-ex.entered
		done := make(chan TerminationReport, 1)
		go func() { done <- r.Terminate(context.Background()) }()
		time.Sleep(100 * time.Millisecond)
		if got := db.events(); len(got) > 0 {
			t.Fatalf("the termination acted during the exec: %q", got)
		}
		close(ex.release) // the exec fails: the process goes on
		rep := <-done
		if got := db.events(); !slices.Equal(got, []string{"fence", "kill 0 sessions", "shutdown"}) || rep.How != StopShutdown {
			t.Fatalf("events %q, report %+v: the termination did not run in full after a failed exec", got, rep)
		}
	})
}

// TestUpgradeRacingAFence: a re-exec must not lose a fence in progress. While
// a fence runs (and escalates), the upgrade waits for it and gives up with
// 503; while a run of fences keeps failing, the budget counted since the
// first failure lives only in this process, so a re-exec, which would
// restart it and delay the escalation past the operator's lease deadline,
// is refused with 409.
func TestUpgradeRacingAFence(t *testing.T) {
	t.Run("a fence that keeps failing", func(t *testing.T) {
		db := &lifeDB{writable: true, frozen: true}
		r := lifeRunner(t, db, Config{FenceTimeout: 50 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
		defer cancel()
		if err := r.fenceEscalating(ctx, ReasonView); err == nil {
			t.Fatal("a fence on a frozen mysqld held")
		}
		err := r.lockForExec()
		var ue *upgradeError
		if !errors.As(err, &ue) || ue.code != http.StatusConflict || ue.result != UpgradeFenceFailing || !errors.Is(err, ErrFenceFailing) {
			t.Fatalf("re-exec during a failing fence: %v, want 409 %s", err, UpgradeFenceFailing)
		}
	})
	t.Run("a fence under way", func(t *testing.T) {
		db := &lifeDB{writable: true, frozen: true}
		r := lifeRunner(t, db, Config{FenceTimeout: 100 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		fenced := make(chan error, 1)
		go func() { fenced <- r.fenceEscalating(ctx, ReasonView) }()
		time.Sleep(20 * time.Millisecond)
		err := r.lockForExec()
		var ue *upgradeError
		if !errors.As(err, &ue) || ue.code != http.StatusServiceUnavailable || ue.result != UpgradeBusy {
			t.Fatalf("re-exec during a fence: %v, want 503 %s", err, UpgradeBusy)
		}
		if err := <-fenced; err != nil {
			t.Fatalf("the escalation did not stop the frozen mysqld: %v", err)
		}
		if got := db.events(); !slices.Equal(got, []string{"SIGKILL (writable)"}) {
			t.Fatalf("events %q, want the escalation's SIGKILL", got)
		}
	})
}
