//go:build db

package reclone_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// entrypoint stands for the kubelet and the mysqld container's
// entrypoint: it starts mysqld i whenever it is not running and the hold
// file lets it (WaitHold), and holds the lock while that mysqld runs, as
// the exec'd mysqld does in a Pod.
func entrypoint(t *testing.T, c *testbed.MariaDBCluster, i int, hold string, lock interface{ Close() error }) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for c.Running(i) && ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
			}
			if lock != nil {
				_ = lock.Close() // mysqld exited
			}
			l, err := reclone.WaitHold(ctx, hold, 20*time.Millisecond, nil)
			if err != nil {
				return
			}
			if err := c.Start(i); err != nil {
				t.Errorf("start mysqld: %v", err)
			}
			lock = l
		}
		if lock != nil {
			_ = lock.Close()
		}
	}()
}

// TestHoldFileStopsAndStartsARealMariaDB: Stop shuts a real mariadbd down
// and it stays down while held, although its entrypoint would start it
// again at once; Start lets it start, read-only as it boots.
func TestHoldFileStopsAndStartsARealMariaDB(t *testing.T) {
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	hold := filepath.Join(t.TempDir(), "mysqld.hold")
	first, err := reclone.WaitHold(t.Context(), hold, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	entrypoint(t, c, 0, hold, first)
	in, err := mysql.Open(mysql.Config{Socket: c.Socket(0), User: "root", DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	h := reclone.HoldFile{Path: hold, Shutdown: in.Shutdown, Answers: func(ctx context.Context) bool {
		_, err := in.Status(ctx)
		return err == nil
	}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if c.Running(0) {
		t.Fatal("mysqld runs after Stop returned")
	}
	time.Sleep(time.Second)
	if c.Running(0) {
		t.Fatal("mysqld was started again while held")
	}
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("Stop of a stopped mysqld: %v", err)
	}
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var ro int
	for ctx.Err() == nil {
		if err = db.QueryRowContext(ctx, "SELECT @@global.read_only").Scan(&ro); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || ro != 1 {
		t.Fatalf("after Start: read_only %d, %v; want a read-only mysqld", ro, err)
	}
}
