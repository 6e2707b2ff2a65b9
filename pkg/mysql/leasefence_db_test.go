//go:build db

package mysql_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

type leaseFencer interface {
	ArmLeaseFence(ctx context.Context, after time.Duration) error
}

// TestLeaseFenceFencesTheServer: an armed lease fence that nobody pushes
// later fences mysqld by itself, an open application transaction cannot
// commit after it, and nothing reaches the binlog.
func TestLeaseFenceFencesTheServer(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	app := s.db(t, 0, true)
	mustExec(t, app, "CREATE TABLE t (id INT PRIMARY KEY)")
	before := s.executed(t, 0)
	lf := s.in[0].(leaseFencer)

	if err := lf.ArmLeaseFence(ctx, 500*time.Millisecond); !errors.Is(err, mysql.ErrLeaseFenceUnavailable) {
		t.Fatalf("arm under a second: %v, want ErrLeaseFenceUnavailable", err)
	}
	// Armed again and again within its time, it never fires.
	for range 4 {
		began := time.Now()
		if err := lf.ArmLeaseFence(ctx, 2*time.Second); err != nil {
			t.Fatalf("arm: %v", err)
		}
		t.Logf("armed in %s", time.Since(began).Round(time.Millisecond))
		time.Sleep(700 * time.Millisecond)
	}
	if st := s.status(t, 0); !st.Writable() {
		t.Fatal("a lease fence pushed later in time fired")
	}
	tx, err := app.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	armed := time.Now()
	if err := lf.ArmLeaseFence(ctx, time.Second); err != nil {
		t.Fatalf("arm: %v", err)
	}
	eventually(t, 5*time.Second, "the lease fence fences the server", func() bool { return s.status(t, 0).Fenced() })
	t.Logf("fenced %s after arming for 1s", time.Since(armed).Round(10*time.Millisecond))
	if err := tx.Commit(); err == nil {
		t.Fatal("an application transaction open before the lease fence committed after it")
	}
	if _, err := app.ExecContext(ctx, "INSERT INTO t VALUES (2)"); errno(err) != 1290 {
		t.Fatalf("app write after the lease fence: got %v, want error 1290", err)
	}
	if after := s.executed(t, 0); !after.Equal(before) {
		t.Fatalf("arming wrote to the binlog: executed %s, was %s", after, before)
	}
	// Unfenced and armed again, it fires again, also with another event in
	// the scheduler's queue (a one-time event that already ran would stay
	// behind it for good).
	mustExec(t, s.db(t, 0, false), "CREATE EVENT IF NOT EXISTS mysql.other_hourly ON SCHEDULE EVERY 1 HOUR DO DO 1")
	if err := s.in[0].Unfence(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lf.ArmLeaseFence(ctx, time.Second); err != nil {
		t.Fatalf("arm again: %v", err)
	}
	eventually(t, 5*time.Second, "the re-armed lease fence fences the server", func() bool { return s.status(t, 0).Fenced() })
}
