//go:build db

package mysql_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestApplierBusyInOneTransaction (issue 15, gap 4), on real MariaDB: the
// replica applies one transaction that takes seconds (statement-based,
// sleeping per row), so its executed set stands still meanwhile. Reads of
// its applier's open transaction show the rows it modified growing, and
// topology.JudgeDrain waits past the progress bound instead of taking it
// for a stall.
func TestApplierBusyInOneTransaction(t *testing.T) {
	s := startSites(t, 2)
	ctx := ctxFor(t, 60*time.Second)
	root := s.dbAs(t, 0, s.c.RootDSN(0))
	mustExec(t, root, "CREATE TABLE app.big (id INT PRIMARY KEY, v INT)")
	if err := s.in[1].WaitForGTID(ctx, s.executed(t, 0), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	conn, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE app"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION binlog_format = 'STATEMENT'"); err != nil {
		t.Fatal(err)
	}
	// Six seconds on the source, then again on the replica's applier.
	if _, err := conn.ExecContext(ctx, "INSERT INTO big SELECT seq, SLEEP(0.02) FROM seq_1_to_300"); err != nil {
		t.Fatal(err)
	}
	b := topology.DrainBounds{Progress: time.Second, Overall: time.Minute}
	probed := s.status(t, 1)
	target := topology.SiteView{Name: "b", Executed: probed.Executed,
		Replication: topology.Replication{Retrieved: s.executed(t, 0)}}
	var w topology.DrainWatch
	var slow, busy int
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st := s.status(t, 1)
		aw, err := s.in[1].ApplierWork(ctx)
		if err != nil {
			t.Fatal(err)
		}
		read := topology.RelayRead{Executed: st.Executed, Applying: st.Replica != nil && st.Replica.SQLRunning,
			ApplierTrx: aw.Trx, ApplierRows: aw.Rows}
		if read.Retrieved, err = st.Replica.RetrievedSet(st.Flavor); err != nil {
			t.Fatal(err)
		}
		v, next := topology.JudgeDrain(target, w, read, time.Now(), b)
		switch v {
		case topology.DrainHolds:
			if slow < 3 || busy < 2 {
				t.Fatalf("applied after %d slow verdicts, %d reads busy in a transaction: the long transaction was not seen", slow, busy)
			}
			return
		case topology.DrainSlow:
			slow++
		default:
			t.Fatalf("verdict %d after %d slow ones (read %+v): a busy applier taken for a stall", v, slow, read)
		}
		if aw.Trx != "" {
			busy++
		}
		w = next
		time.Sleep(1500 * time.Millisecond) // past the progress bound each time
	}
	t.Fatalf("the replica did not apply the transaction in time (%d slow verdicts)", slow)
}
