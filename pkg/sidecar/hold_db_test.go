//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/testbed"
)

// TestPrivilegedAccountCannotWriteThroughTheFence is path 12 of issue 13:
// MariaDB's read_only exempts READ_ONLY ADMIN holders, so a user-created
// account with that privilege wrote through a sidecar's fence. After the
// fence, no session but Bloodraven's own may commit; when the operator
// re-asserts the site, writes flow again.
func TestPrivilegedAccountCannotWriteThroughTheFence(t *testing.T) {
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication())
	op, x := newOperator(t, "iad"), newToxi()
	iad := newSite(t, c, 0, "iad")
	iad.run(t, x, op, fast)
	iad.reassert(t)
	app := iad.appDB(t)
	mustExec(t, app, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, who VARCHAR(16))")

	root, err := sql.Open("mysql", c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	mustExec(t, root, "CREATE USER 'dba'@'%' IDENTIFIED BY 'dba-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT ON app.* TO 'dba'@'%'")
	mustExec(t, root, "GRANT READ_ONLY ADMIN ON *.* TO 'dba'@'%'")
	dbaDSN := c.DSN(0, testbed.Account{User: "dba", Password: "dba-pw"}, testbed.AppDatabase)
	// write opens a NEW connection as dba and inserts one row.
	write := func(timeout time.Duration) error {
		db, err := sql.Open("mysql", dbaDSN)
		if err != nil {
			return err
		}
		defer func() { _ = db.Close() }()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err = db.ExecContext(ctx, "INSERT INTO t (who) VALUES ('dba')")
		return err
	}
	if err := write(5 * time.Second); err != nil {
		t.Fatalf("dba writes on the primary: %v", err)
	}

	iad.op.blackhole()
	eventually(t, fast.lease+3*fast.tick+slack, "the lease fence", func() bool {
		f := iad.runner.Status().LastFence
		return f != nil && f.Reason == "lease"
	})
	time.Sleep(2 * fast.tick)
	if iad.writable(t) {
		t.Fatal("writable after the fence")
	}
	for i := range 3 {
		if err := write(time.Second); err == nil {
			t.Fatalf("attempt %d: a READ_ONLY ADMIN account committed through the fence", i+1)
		}
	}
	// Someone kills every session of the sidecar's account, the hold's
	// included: the next tick takes it again.
	opDB, err := sql.Open("mysql", c.OperatorDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = opDB.Close() }()
	mustExec(t, opDB, "KILL CONNECTION USER 'root'")
	time.Sleep(2 * fast.tick)
	if iad.runner.Status().WriteHoldSince == nil {
		t.Fatal("no write hold in /status two ticks after its session was killed")
	}
	if err := write(time.Second); err == nil {
		t.Fatal("a READ_ONLY ADMIN account committed after the hold was retaken")
	}
	var n int
	if err := root.QueryRowContext(ctxFor(t, 5*time.Second), "SELECT COUNT(*) FROM app.t WHERE who = 'dba'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows by dba, want only the one from before the fence", n)
	}

	// The operator comes back and re-asserts iad: writes flow again.
	iad.op.heal()
	iad.reassert(t)
	eventually(t, 5*time.Second, "the application writes again after the re-assert", func() bool {
		_, err := app.ExecContext(ctxFor(t, 2*time.Second), "INSERT INTO t (who) VALUES ('app')")
		return err == nil
	})
	if err := write(2 * time.Second); err != nil {
		t.Fatalf("dba after the re-assert: %v", err)
	}
}
