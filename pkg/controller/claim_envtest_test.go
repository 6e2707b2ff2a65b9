//go:build envtest

package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// racedLeadership stands for a deposed leader paused between its checks and
// its statement: once armed, its first check passes only after another
// operator process (the new leader) has written the group's status. Its
// second check, a pass later, records whether the first one's target (a)
// was left read-only.
type racedLeadership struct {
	e     *env
	armed atomic.Bool
	calls atomic.Int32
	// untouched receives, at the second check, whether a was read-only.
	untouched chan bool
	// wrote is the other writer's error, if any.
	wrote atomic.Value
}

func (l *racedLeadership) Held(ctx context.Context) error {
	if !l.armed.Load() {
		return nil
	}
	switch l.calls.Add(1) {
	case 1:
		g := l.e.get()
		g.Status.ObservedGeneration += 1000
		if err := cp.Client.Status().Update(ctx, g); err != nil {
			l.wrote.Store(fmt.Sprint(err))
		}
	case 2:
		l.untouched <- !l.e.writable("a")
	}
	return nil
}

// TestReassertAbortsWhenAnotherWriterMoved: the active site a is found
// fenced with nothing else writable, so the operator re-asserts it. It
// passes its checks, and before its Promote statement another operator
// process writes the group's status. The re-assert must stop with no SQL
// against a (its claim, persisted with the optimistic lock on the status
// the decision was made on, conflicts with the real API server); the next
// pass, on a fresh read, re-asserts.
func TestReassertAbortsWhenAnotherWriterMoved(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	lead := &racedLeadership{e: e, untouched: make(chan bool, 1)}
	e.startOperatorWith(func(d *controller.Deps, _ *controller.Options) { d.Leadership = lead })
	e.keepAsking("a", "b")
	e.healthy()
	lead.armed.Store(true)
	e.rootExec("a", "SET GLOBAL read_only = 1")
	select {
	case untouched := <-lead.untouched:
		if w := lead.wrote.Load(); w != nil {
			t.Fatalf("the other writer could not write: %v", w)
		}
		if !untouched {
			t.Fatal("a was made writable after another writer moved the status on")
		}
	case <-time.After(20 * time.Second):
		if e.writable("a") {
			t.Fatalf("a was made writable by the raced re-assert (checks: %d)", lead.calls.Load())
		}
		t.Fatalf("no second re-assert check within 20 s (checks: %d)", lead.calls.Load())
	}
	e.eventually(10*time.Second, "a re-asserted on a fresh pass", func() bool { return e.writable("a") })
	e.eventually(5*time.Second, "a's claim cleared", func() bool {
		return !failover.MaybeWritable(&e.get().Status, "a")
	})
}
