//go:build db

package failover

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestEmergencyPromotesReceivedOnMariaDB: three real MariaDB servers, a the
// source, b and c its replicas. c's applier waits on a global read lock
// while its IO thread receives everything; b applies more than c, then
// stops replicating before a's last commits, which only c receives. a
// crashes. c is chosen (it holds the most once its relay log is applied),
// its relay log is applied before Promote's RESET SLAVE ALL (the lock is
// let go while the drain waits), and the new primary holds every row a
// committed.
func TestEmergencyPromotesReceivedOnMariaDB(t *testing.T) {
	s := openSites(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	app := openDB(t, s.c.AppDSN(0))
	mustExecDB(ctx, t, app, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	for _, r := range []string{"b", "c"} {
		if err := s.in[r].WaitForGTID(ctx, mustStatus(ctx, t, s.in["a"]).Executed, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// c's applier blocks on a global read lock held on its own connection.
	lock, err := openDB(t, s.c.RootDSN(2)).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Close() }()
	mustExecConn(ctx, t, lock, "FLUSH TABLES WITH READ LOCK")
	mustExecDB(ctx, t, app, "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
	if err := s.in["b"].WaitForGTID(ctx, mustStatus(ctx, t, s.in["a"]).Executed, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.in["b"].StopReplication(ctx); err != nil {
		t.Fatal(err)
	}
	mustExecDB(ctx, t, app, "INSERT INTO t VALUES (4)", "INSERT INTO t VALUES (5)")
	head := mustStatus(ctx, t, s.in["a"]).Executed
	cst := waitReceived(ctx, t, s, head)
	s.c.Kill(0)

	w := newWorld(t)
	w.addSite("c")
	primaryCrashed(w)
	w.reports["a"] = &topology.Report{At: t0.Add(time.Second), ViewOperator: "op1", ViewSeq: 101, MysqldDown: true}
	w.now = t0.Add(time.Second)
	w.sites["a"].executed = head
	w.sites["b"].executed = mustStatus(ctx, t, s.in["b"]).Executed
	w.sites["c"].executed, w.sites["c"].retrieved = cst.executed, cst.retrieved
	if gtid.Lacks(w.sites["b"].executed, head).IsEmpty() || gtid.Lacks(cst.executed, w.sites["b"].executed).IsEmpty() {
		t.Fatalf("setup: b %s must lack some of a's %s, c %s must lack some of b's", w.sites["b"].executed, head, cst.executed)
	}
	env := w.env()
	env.DB = s
	// The lock goes while the drain waits: c's applier then catches up.
	go func() {
		time.Sleep(time.Second)
		_, _ = lock.ExecContext(context.Background(), "UNLOCK TABLES")
	}()
	out, err := NewEmergency(env).Advance(ctx, w.pass())
	if err != nil || !out.Completed {
		t.Fatalf("failover: %+v, %v", out, err)
	}
	if st := w.persisted.Status; st.ActiveSite != "c" {
		t.Fatalf("active %s, want c (it received a's last commits)", st.ActiveSite)
	}
	if c := mustStatus(ctx, t, s.in["c"]); !c.Writable() || !gtid.Lacks(c.Executed, head).IsEmpty() {
		t.Fatalf("c writable %v holding %s; want writable holding a's %s", c.Writable(), c.Executed, head)
	}
	var n int
	if err := openDB(t, s.c.AppDSN(2)).QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 5 {
		t.Fatalf("c holds %d rows (err %v), want all 5", n, err)
	}
	st := &w.persisted.Status
	if !AccountLoss(st, head) || *st.LastFailover.TransactionsLost != 0 {
		t.Fatalf("lost %v (%s), want 0", st.LastFailover.TransactionsLost, st.LastFailover.LostGtidSet)
	}
}

type received struct{ executed, retrieved gtid.Set }

// waitReceived waits until c's IO thread received head and returns c's
// executed set and, as the poll loop reads it, its Gtid_IO_Pos as a set.
func waitReceived(ctx context.Context, t *testing.T, s sqlSites, head gtid.Set) received {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st := mustStatus(ctx, t, s.in["c"])
		if st.Replica == nil {
			t.Fatal("c does not replicate")
		}
		pos, err := gtid.ParsePos(st.Replica.Retrieved)
		if err != nil {
			t.Fatal(err)
		}
		var got gtid.Set
		for _, g := range pos {
			got = got.Union(gtid.MustParseSet(fmt.Sprintf("%d-%d:%d", g.Domain, g.Server, g.Seq)))
		}
		if gtid.Lacks(st.Executed.Union(gtid.Lacks(st.Executed, got)), head).IsEmpty() {
			return received{st.Executed, got}
		}
	}
	t.Fatalf("c never received %s", head)
	return received{}
}

func mustExecConn(ctx context.Context, t *testing.T, c *sql.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
