//go:build db

package mysql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestTopologyLockOfAStalledHolderExpires: a deposed leader takes a
// server's topology lock (a salvage, past its read-only check) and then
// stalls or is cut off without releasing it. The server must not keep the
// lock for its default wait_timeout (hours): the locking session is idle
// for no longer than its short wait_timeout, the server drops it, and a
// new leader's promotion of that server gets the lock.
func TestTopologyLockOfAStalledHolderExpires(t *testing.T) {
	s := startSites(t, 2)
	a := s.c.Accounts
	deposed, err := mysql.Open(mysql.Config{Addr: s.c.Addr(1), User: a.Operator.User, Password: a.Operator.Password,
		SystemUsers: []string{a.Replication.User, a.Monitor.User}, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deposed.Close() })
	held, stall := make(chan struct{}), make(chan struct{})
	restore := mysql.SetSalvageCheckedHook(func() { close(held); <-stall })
	defer restore()
	defer close(stall)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = deposed.SalvageFrom(ctx, s.endpoint(0), s.repl(), s.executed(t, 0), s.executed(t, 1), nil)
	}()
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the salvage never took the topology lock")
	}
	// Sanity: while the holder's session lives, the lock is busy.
	pctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err = s.in[1].Promote(pctx, mysql.PromoteOptions{})
	cancel()
	if !errors.Is(err, mysql.ErrTopologyLockBusy) {
		t.Fatalf("promotion while the lock is held: %v, want ErrTopologyLockBusy", err)
	}
	start := time.Now()
	for {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = s.in[1].Promote(pctx, mysql.PromoteOptions{})
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, mysql.ErrTopologyLockBusy) || time.Since(start) > 30*time.Second {
			t.Fatalf("after %s the promotion still fails: %v (the stalled holder keeps the lock)", time.Since(start), err)
		}
	}
	t.Logf("the stalled holder's lock went after %s", time.Since(start))
}
