//go:build db

package sidecar_test

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func uptime(t *testing.T, root *sql.DB) int64 {
	t.Helper()
	var n int64
	if err := root.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReexecKeepsTheFenceState, with a real MariaDB: the sidecar of the
// writable primary is replaced by a new process that takes its handover
// over (a re-exec without the exec: the old Runner halts, a new one starts
// from the handover). mysqld is not touched: its uptime keeps climbing, it
// stays writable, no fence; the generation is kept (the lease: the unit tests). Then the
// operator fences the site by SQL: the sidecar holds the write hold, and a
// re-exec is refused while it does, so no privileged account can write
// through the swap.
func TestReexecKeepsTheFenceState(t *testing.T) {
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	cfg := iad.config(t, x, op, fast)
	iad.runWith(t, cfg)
	iad.reassert(t)
	root, err := sql.Open("mysql", c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	eventually(t, 3*fast.tick+slack, "the write hold released on the writable primary", func() bool {
		return iad.runner.Status().WriteHoldSince == nil
	})
	up := uptime(t, root)
	before := iad.runner.Status()
	h, err := iad.runner.PrepareExec()
	if err != nil {
		t.Fatalf("prepare exec on a writable primary: %v", err)
	}
	iad.halt()
	fences := iad.db.fences.Load()
	time.Sleep(1100 * time.Millisecond) // mysqld's uptime counts seconds
	cfg.Handover = &h
	next := newSite(t, c, 0, "iad")
	next.db, next.op = iad.db, iad.op
	next.runWith(t, cfg)
	st := next.runner.Status()
	if !st.HandedOver || st.AwaitingOperator || st.View == nil || st.View.Generation != before.View.Generation {
		t.Fatalf("after the re-exec: handedOver %v awaiting %v view %+v, before %+v", st.HandedOver, st.AwaitingOperator, st.View, before.View)
	}
	time.Sleep(3 * fast.tick)
	if n := iad.db.fences.Load(); n != fences {
		t.Fatalf("the new process fenced the primary (%d fences, %d before)", n, fences)
	}
	if !next.writable(t) {
		t.Fatal("the primary is read-only after the re-exec")
	}
	if u := uptime(t, root); u <= up {
		t.Fatalf("mysqld uptime %d, was %d: mysqld restarted", u, up)
	}
	// The operator fences the site by SQL: the sidecar holds writes, and
	// refuses to re-execute while it does.
	if err := iad.db.Fence(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatalf("fence: %v", err)
	}
	eventually(t, 3*fast.tick+slack, "the write hold after the operator's fence", func() bool {
		return next.runner.Status().WriteHoldSince != nil
	})
	if _, err := next.runner.PrepareExec(); !errors.Is(err, sidecar.ErrWriteHeld) {
		t.Fatalf("re-exec while the write hold is held: %v, want %v", err, sidecar.ErrWriteHeld)
	}
	if next.runner.Status().WriteHoldSince == nil || next.writable(t) {
		t.Fatal("the refused re-exec dropped the hold or the fence")
	}
}
