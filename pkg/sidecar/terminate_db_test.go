//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// crashRecovery is what MariaDB's error log says when InnoDB replays its
// redo log at start: the server was not shut down cleanly.
const crashRecovery = "Starting crash recovery"

// acked is every write a writer saw committed.
type acked struct {
	mu  sync.Mutex
	ids []string
	// began is when each acknowledged statement was sent.
	began []time.Time
}

func (a *acked) add(id string, began time.Time) {
	a.mu.Lock()
	a.ids, a.began = append(a.ids, id), append(a.began, began)
	a.mu.Unlock()
}

// sentAfter counts the acknowledged statements sent after t.
func (a *acked) sentAfter(t time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, b := range a.began {
		if b.After(t) {
			n++
		}
	}
	return n
}

// writers runs n application writers, each on a connection of its own
// that it keeps, inserting one row per autocommit statement until stop is
// closed. Only a statement that returned OK is acknowledged; a failed one
// reconnects and goes on.
func writers(t *testing.T, c *testbed.MariaDBCluster, n int, stop <-chan struct{}) (*acked, *sync.WaitGroup) {
	t.Helper()
	a := &acked{}
	var wg sync.WaitGroup
	for w := range n {
		db, err := sql.Open("mysql", c.AppDSN(0))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = db.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, seq)
				began := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := db.ExecContext(ctx, "INSERT INTO lifecycle (id) VALUES (?)", id)
				cancel()
				if err == nil {
					a.add(id, began)
					continue
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	return a, &wg
}

// freeze sends SIGSTOP to the mysqld the pid file names: it keeps its
// port and sessions open and answers nothing, as a hung server does.
func freeze(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The stop lands asynchronously: wait until the process shows it.
	eventually(t, 5*time.Second, "mysqld is stopped", func() bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		i := strings.LastIndexByte(string(stat), ')')
		return err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
	})
}

// errorLogFrom is instance i's error log after offset bytes.
func errorLogFrom(t *testing.T, c *testbed.MariaDBCluster, i int, offset int64) string {
	t.Helper()
	b, err := os.ReadFile(c.ErrorLog(i))
	if err != nil {
		t.Fatal(err)
	}
	return string(b[min(offset, int64(len(b))):])
}

// TestTerminationUnderWriters is issue 18's db-tier test of the instance
// lifecycle: a writable primary under 4 writers is terminated (the
// kubelet's SIGTERM). The sidecar fences it first, drains for half of
// stopDelay, kills the sessions left and shuts mysqld down. Every write a
// writer saw acknowledged is there after a restart, the restart needs no
// crash recovery, and no write was acknowledged after the fence. A frozen
// mysqld (SIGSTOP) cannot be fenced: it is killed before stopDelay ends,
// and loses nothing acknowledged either. The control case kills mysqld
// instead, to show that the error log check sees a crash recovery when
// there is one.
func TestTerminationUnderWriters(t *testing.T) {
	for _, tc := range []struct {
		name      string
		terminate bool // else SIGKILL, the control
		// freeze: SIGSTOP mysqld before the termination; the fence cannot
		// complete, and the termination must SIGKILL it in time.
		freeze bool
	}{
		{name: "smart then fast", terminate: true},
		{name: "frozen mysqld: killed within stopDelay, nothing lost", terminate: true, freeze: true},
		{name: "control: SIGKILL needs crash recovery"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
			op, x := newOperator(t, "iad"), newToxi()
			iad := newSite(t, c, 0, "iad")
			cfg := iad.config(t, x, op, fast)
			cfg.Process = sidecar.Process{PIDFile: filepath.Join(filepath.Dir(c.ConfigFile(0)), "mysqld.pid"), TCPAddr: c.Addr(0)}
			cfg.StopDelay = 6 * time.Second
			iad.runWith(t, cfg)
			iad.reassert(t)
			root, err := sql.Open("mysql", c.RootDSN(0))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = root.Close() }()
			mustExec(t, root, "CREATE TABLE "+testbed.AppDatabase+".lifecycle (id VARCHAR(32) PRIMARY KEY) ENGINE=InnoDB")

			stop := make(chan struct{})
			acks, wg := writers(t, c, 4, stop)
			eventually(t, 10*time.Second, "the writers commit", func() bool {
				acks.mu.Lock()
				defer acks.mu.Unlock()
				return len(acks.ids) >= 200
			})
			logStart := int64(len(errorLogFrom(t, c, 0, 0)))
			var rep sidecar.TerminationReport
			start := time.Now()
			if tc.freeze {
				freeze(t, cfg.Process.PIDFile)
			}
			if tc.terminate {
				rep = iad.runner.Terminate(context.Background())
			} else {
				c.Kill(0)
			}
			took := time.Since(start)
			close(stop)
			wg.Wait()
			iad.halt()
			ackedAfterFence := 0
			if tc.terminate {
				t.Logf("termination: %+v in %s, %d writes acknowledged", rep, took, len(acks.ids))
				// A frozen mysqld is killed by the termination, or, when its
				// fence outlasted the lease, by the fencing loop's
				// escalation first (then the termination finds it gone).
				wantHow := []string{sidecar.StopShutdown}
				if tc.freeze {
					wantHow = []string{sidecar.StopKill, sidecar.TermGone}
				}
				if !slices.Contains(wantHow, rep.How) || (!tc.freeze && rep.Fenced.IsZero()) || len(rep.Steps) == 0 || rep.Steps[0] != "fence" {
					t.Fatalf("report %+v, want the fence tried first and a stop by %v", rep, wantHow)
				}
				if took > cfg.StopDelay {
					t.Fatalf("termination took %s, more than stopDelay %s", took, cfg.StopDelay)
				}
				// Its pid file and port are gone; the process exits right after.
				eventually(t, 3*time.Second, "mysqld's process exits", func() bool { return !c.Running(0) })
				// A statement sent once the fence held must not commit.
				if !rep.Fenced.IsZero() {
					ackedAfterFence = acks.sentAfter(rep.Fenced)
				}
				if !tc.freeze && !strings.Contains(errorLogFrom(t, c, 0, logStart), "Shutdown complete") {
					t.Fatalf("no clean shutdown in the error log:\n%s", errorLogFrom(t, c, 0, logStart))
				}
			}
			if err := c.Start(0); err != nil {
				t.Fatal(err)
			}
			boot := errorLogFrom(t, c, 0, logStart)
			clean := tc.terminate && !tc.freeze
			if got := strings.Contains(boot, crashRecovery); got == clean {
				t.Fatalf("crash recovery at restart: %v, want %v; error log:\n%s", got, !clean, boot)
			}
			missing := missingRows(t, c, acks.ids)
			if len(missing) > 0 {
				t.Fatalf("%d of %d acknowledged writes lost after the restart, e.g. %v", len(missing), len(acks.ids), missing[:min(5, len(missing))])
			}
			if ackedAfterFence > 0 {
				t.Fatalf("%d writes sent after the fence were acknowledged", ackedAfterFence)
			}
		})
	}
}

// TestTerminationLeavesTheReplicaComplete: a primary with a replica is
// terminated under 4 writers and never comes back. The replica alone
// holds every acknowledged write: the termination fenced the primary
// first, and its SHUTDOWN waited for the connected replica to receive the
// whole binary log.
func TestTerminationLeavesTheReplicaComplete(t *testing.T) {
	c := testbed.StartMariaDB(t, 2)
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	cfg := iad.config(t, x, op, fast)
	cfg.Process = sidecar.Process{PIDFile: filepath.Join(filepath.Dir(c.ConfigFile(0)), "mysqld.pid"), TCPAddr: c.Addr(0)}
	cfg.StopDelay = 6 * time.Second
	iad.runWith(t, cfg)
	iad.reassert(t)
	root, err := sql.Open("mysql", c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	mustExec(t, root, "CREATE TABLE "+testbed.AppDatabase+".lifecycle (id VARCHAR(32) PRIMARY KEY) ENGINE=InnoDB")
	stop := make(chan struct{})
	acks, wg := writers(t, c, 4, stop)
	eventually(t, 10*time.Second, "the writers commit", func() bool {
		acks.mu.Lock()
		defer acks.mu.Unlock()
		return len(acks.ids) >= 200
	})
	rep := iad.runner.Terminate(context.Background())
	close(stop)
	wg.Wait()
	iad.halt()
	if rep.How != sidecar.StopShutdown || rep.Fenced.IsZero() {
		t.Fatalf("report %+v, want a fence and a clean shutdown", rep)
	}
	var missing []string
	eventually(t, 10*time.Second, "the replica applies every acknowledged write", func() bool {
		missing = missingRowsOn(t, c, 1, acks.ids)
		return len(missing) == 0
	})
	t.Logf("replica holds all %d acknowledged writes; termination %v", len(acks.ids), rep.Steps)
}

// missingRows are the acknowledged ids not in instance 0's table.
func missingRows(t *testing.T, c *testbed.MariaDBCluster, ids []string) []string {
	return missingRowsOn(t, c, 0, ids)
}

// missingRowsOn are the acknowledged ids not in instance i's table.
func missingRowsOn(t *testing.T, c *testbed.MariaDBCluster, i int, ids []string) []string {
	t.Helper()
	db, err := sql.Open("mysql", c.RootDSN(i))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.QueryContext(ctxFor(t, 10*time.Second), "SELECT id FROM "+testbed.AppDatabase+".lifecycle")
	if err != nil {
		t.Fatalf("read the rows back: %v", err)
	}
	defer func() { _ = rows.Close() }()
	have := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	return missing
}
