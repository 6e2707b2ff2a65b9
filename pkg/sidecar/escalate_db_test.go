//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// bigRows is how many rows the stuck UPDATE changes.
const bigRows = 500_000

// prober opens a NEW application connection for every write and records when
// each commit was acknowledged.
type prober struct {
	mu    sync.Mutex
	acked []time.Time
	tries int
}

func (p *prober) run(ctx context.Context, dsn string) {
	for ctx.Err() == nil {
		db, err := sql.Open("mysql", dsn)
		if err == nil {
			db.SetMaxIdleConns(0)
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = db.ExecContext(wctx, "INSERT INTO probe (at) VALUES (NOW(6))")
			cancel()
			at := time.Now()
			_ = db.Close()
			p.mu.Lock()
			p.tries++
			if err == nil {
				p.acked = append(p.acked, at)
			}
			p.mu.Unlock()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *prober) after(t time.Time) (n int, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.acked {
		if a.After(t) {
			n++
			last = a
		}
	}
	return n, last
}

// TestStuckFenceStopsMySQLDWithinBudget is path 4 of issue 13: an isolated
// primary runs an UPDATE of 500,000 rows when its lease runs out. SET GLOBAL
// read_only waits on the statement's locks, and the killed statement keeps
// them while it rolls back, so the fence cannot complete. The sidecar must
// stop mysqld within its budget, before the operator's lease deadline (the
// last renewal + leaseTimeout + peerCheckInterval), and from then on no
// commit from a new application connection succeeds.
func TestStuckFenceStopsMySQLDWithinBudget(t *testing.T) {
	tm := timing{lease: 3 * time.Second, tick: time.Second}
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication(), testbed.WithConfig("innodb_buffer_pool_size=64M"))
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	cfg := iad.config(t, x, op, tm)
	cfg.Process = sidecar.Process{PIDFile: filepath.Join(filepath.Dir(c.ConfigFile(0)), "mysqld.pid"), TCPAddr: c.Addr(0)}
	iad.runWith(t, cfg)
	iad.reassert(t)

	app := iad.appDB(t)
	mustExec(t, app, "CREATE TABLE probe (id INT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6))")
	mustExec(t, app, "CREATE TABLE big (id INT PRIMARY KEY, v INT, pad CHAR(200))")
	fill := time.Now()
	for from := 1; from <= bigRows; from += 100_000 {
		if _, err := app.ExecContext(ctxFor(t, 120*time.Second), "INSERT INTO big (id, v, pad) "+
			"SELECT seq, 0, 'x' FROM seq_"+strconv.Itoa(from)+"_to_"+strconv.Itoa(from+99_999)); err != nil {
			t.Fatalf("fill big: %v", err)
		}
	}
	t.Logf("filled %d rows in %s", bigRows, time.Since(fill).Round(time.Millisecond))

	// One application transaction updates every row again and again. Once the
	// first pass is done, a rollback undoes at least 500,000 row changes, so
	// the fence stays stuck however fast this machine is; a single UPDATE
	// could finish before the lease ran out on a quiet machine.
	firstPass, updStart := make(chan error, 1), time.Now()
	go repeatUpdates(app, firstPass)
	select {
	case err := <-firstPass:
		if err != nil {
			t.Fatalf("first pass of the UPDATE: %v", err)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the first pass of the UPDATE took over 120s")
	}
	t.Logf("first pass of the UPDATE took %s", time.Since(updStart).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond) // the second pass is running now

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &prober{}
	go p.run(ctx, c.AppDSN(0))

	iad.op.blackhole() // isolated: no more renewals
	isolated := time.Now()
	var stop *sidecar.StopReport
	eventually(t, tm.lease+3*tm.tick+slack, "the sidecar stops mysqld", func() bool {
		stop = iad.runner.Status().MySQLDStop
		return stop != nil
	})
	st := iad.runner.Status()
	t.Logf("isolated at +0; stop %s at +%s (%s); update ran %s; fence error: %s", stop.How,
		stop.At.Sub(isolated).Round(time.Millisecond), stop.Error, stop.At.Sub(updStart).Round(time.Millisecond), stop.FenceError)
	if stop.How == sidecar.StopFailed {
		t.Fatalf("the stop failed: %s", stop.Error)
	}
	if st.LastContact == nil {
		t.Fatal("no last contact in /status")
	}
	if deadline := st.LastContact.Add(tm.lease + tm.tick); !stop.At.Before(deadline) {
		t.Fatalf("mysqld stopped at %s, after the operator's lease deadline %s", stop.At, deadline)
	}
	if got := iad.metric(t, sidecar.MetricMySQLDStops, `how="`+stop.How+`"`); got != 1 {
		t.Fatalf("%s{how=%q} = %v, want 1", sidecar.MetricMySQLDStops, stop.How, got)
	}
	// Keep probing for a while: nothing may commit from now on.
	time.Sleep(2 * time.Second)
	cancel()
	if n, last := p.after(stop.At); n > 0 {
		t.Fatalf("%d commits from new connections after the stop, the last at +%s", n, last.Sub(stop.At))
	}
	n, _ := p.after(isolated)
	t.Logf("prober: %d tries, %d commits after the isolation, all before the stop", p.tries, n)
}

// repeatUpdates runs UPDATE passes over every row of big inside one
// transaction until the statement fails (the fence kills it, or mysqld stops).
// It reports the end of the first pass on first.
func repeatUpdates(app *sql.DB, first chan<- error) {
	ctx := context.Background()
	tx, err := app.BeginTx(ctx, nil)
	if err != nil {
		first <- err
		return
	}
	defer func() { _ = tx.Rollback() }()
	const update = "UPDATE big SET v = v + 1, pad = REPEAT(CHAR(97 + v % 20), 200)"
	for pass := 1; ; pass++ {
		q := update
		if pass > 1 {
			// A pause on every row makes each later pass run for about half
			// a minute: the lease runs out while a statement runs, never in
			// the moment between two (where the fence would go through).
			q += " WHERE SLEEP(0.00005) = 0"
		}
		_, err := tx.ExecContext(ctx, q)
		if pass == 1 {
			first <- err
		}
		if err != nil {
			return
		}
	}
}
