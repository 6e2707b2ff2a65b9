//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// gatedDB is the sidecar's connection to mysqld; while mute is set its reads
// and fences get no answer, as from a mysqld whose TCP port has opened but
// which does not serve SQL yet (it is still starting). SQL SHUTDOWN goes
// through.
type gatedDB struct {
	*countingDB
	mute atomic.Bool
}

func (g *gatedDB) Status(ctx context.Context) (st mysql.Status, err error) {
	if g.mute.Load() {
		<-ctx.Done()
		return st, fmt.Errorf("status: %w", ctx.Err())
	}
	return g.countingDB.Status(ctx)
}

func (g *gatedDB) Fence(ctx context.Context) error {
	if g.mute.Load() {
		<-ctx.Done()
		return fmt.Errorf("fence: %w", ctx.Err())
	}
	return g.countingDB.Fence(ctx)
}

func pidOf(t *testing.T, pidFile string) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// TestRestartedMySQLDIsNotStoppedForAnEarlierFence: the kubelet restarts a
// replica's mysqld (a new Deployment generation, a crash) while its sidecar
// keeps running and must keep it fenced (another site is active). While the
// old process shuts down and the new one starts, the sidecar's reads and
// fences get no answer, long past the escalation budget, while the port
// accepts connections. The new process booted read_only from my.cnf: the
// sidecar must leave it running and fence it once it answers, and still
// fence it when it is later made writable.
func TestRestartedMySQLDIsNotStoppedForAnEarlierFence(t *testing.T) {
	tm := timing{lease: 3 * time.Second, tick: 500 * time.Millisecond}
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi() // pdx must be fenced
	pdx := newSite(t, c, 0, "pdx")
	pidFile := filepath.Join(filepath.Dir(c.ConfigFile(0)), "mysqld.pid")
	cfg := pdx.config(t, x, op, tm)
	cfg.Process = sidecar.Process{PIDFile: pidFile, TCPAddr: c.Addr(0)}
	g := &gatedDB{countingDB: pdx.db}
	runGated(t, pdx, g, cfg)
	eventually(t, 10*time.Second, "pdx hears the operator", func() bool { return !pdx.runner.Status().AwaitingOperator })
	old := pidOf(t, pidFile)

	g.mute.Store(true)
	c.Stop(0)
	time.Sleep(2 * tm.tick)
	if err := c.Start(0); err != nil {
		t.Fatal(err)
	}
	fresh := pidOf(t, pidFile)
	if fresh == 0 || fresh == old {
		t.Fatalf("pid %d after the restart, was %d", fresh, old)
	}
	time.Sleep(6 * tm.tick) // starting: port open, no answer, well past the budget
	g.mute.Store(false)
	time.Sleep(3 * tm.tick)
	if st := pdx.runner.Status(); st.MySQLDStop != nil || !c.Running(0) || pidOf(t, pidFile) != fresh {
		t.Fatalf("the restarted mysqld (pid %d) was stopped: running %v, pid now %d, stop %+v",
			fresh, c.Running(0), pidOf(t, pidFile), st.MySQLDStop)
	}
	if pdx.writable(t) {
		t.Fatal("the restarted mysqld is writable")
	}

	// Made writable later, it is fenced again, and not stopped.
	root, err := sql.Open("mysql", c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	fences := g.fences.Load()
	mustExec(t, root, "SET GLOBAL read_only = OFF")
	eventually(t, 4*tm.tick+slack, "the sidecar fences the writable mysqld", func() bool {
		return g.fences.Load() > fences && !pdx.writable(t)
	})
	if st := pdx.runner.Status(); st.MySQLDStop != nil || pidOf(t, pidFile) != fresh {
		t.Fatalf("the writable mysqld was stopped instead of fenced: %+v", st.MySQLDStop)
	}
}

// runGated runs s's Runner on g until the test ends.
func runGated(t *testing.T, s *site, g *gatedDB, cfg sidecar.Config) {
	t.Helper()
	r, err := sidecar.NewRunner(cfg, g, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.runner = r
	s.srv.Config.Handler = r.Handler()
	s.srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
