//go:build db

package sidecar_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestMissingSocketIsNotDown is path 10 of issue 13: the socket file of a
// running MariaDB is removed. The sidecar reads mysqld through that socket,
// so its reads fail with "no such file", yet mysqld still serves TCP and
// still accepts writes there. The sidecar must not report it down (which
// would let the operator confirm a fence that never happened); once the
// process is really gone, it does.
func TestMissingSocketIsNotDown(t *testing.T) {
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	cfg := iad.config(t, x, op, fast)
	cfg.Process = sidecar.Process{PIDFile: filepath.Join(filepath.Dir(c.ConfigFile(0)), "mysqld.pid"), TCPAddr: c.Addr(0)}
	iad.runWith(t, cfg)
	eventually(t, 5*time.Second, "the sidecar reads mysqld", func() bool {
		return iad.runner.Status().MySQLD == sidecar.DBReadOnly.String()
	})

	if err := os.Remove(c.Socket(0)); err != nil {
		t.Fatal(err)
	}
	// End the sidecar's pooled sessions (root, over the socket), so its next
	// read needs a new connection through the missing socket.
	opDB, err := sql.Open("mysql", c.OperatorDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = opDB.Close() }()
	mustExec(t, opDB, "KILL CONNECTION USER 'root'")
	eventually(t, 5*time.Second, "the sidecar fails to read mysqld", func() bool {
		return iad.runner.Status().MySQLD != sidecar.DBReadOnly.String()
	})
	// Several ticks: never down, never reported down.
	until := time.Now().Add(4 * fast.tick)
	for time.Now().Before(until) {
		if st := iad.runner.Status(); st.MySQLD != sidecar.DBUnknown.String() {
			t.Fatalf("socket gone, mysqld serving TCP: state %s (%s), want unknown", st.MySQLD, st.MySQLDError)
		}
		if q := op.report("iad"); q.Get(v1alpha1.QueryMysqld) == "down" {
			t.Fatalf("reported mysqld down while it serves TCP: %v", q)
		}
		time.Sleep(fast.tick / 3)
	}
	// It really serves: the application still writes over TCP.
	mustExec(t, iad.appDB(t), "SELECT 1")

	c.Kill(0)
	eventually(t, 5*time.Second, "the sidecar reports mysqld down once it is gone", func() bool {
		return iad.runner.Status().MySQLD == sidecar.DBDown.String() && op.report("iad").Get(v1alpha1.QueryMysqld) == "down"
	})
}
