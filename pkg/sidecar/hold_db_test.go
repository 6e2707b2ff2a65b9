//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
)

// newDBA makes a user-created account holding READ_ONLY ADMIN on site 0
// of c and returns a writer that opens a NEW connection as it and inserts
// one row into app.t.
func newDBA(t *testing.T, c *testbed.MariaDBCluster, root *sql.DB) func(time.Duration) error {
	t.Helper()
	mustExec(t, root, "CREATE USER 'dba'@'%' IDENTIFIED BY 'dba-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT ON app.* TO 'dba'@'%'")
	mustExec(t, root, "GRANT READ_ONLY ADMIN ON *.* TO 'dba'@'%'")
	// The server gives up a write waiting on the hold after a second, so a
	// write this test saw fail never commits later (a statement whose
	// client left keeps waiting on the server, up to lock_wait_timeout).
	dbaDSN := c.DSN(0, testbed.Account{User: "dba", Password: "dba-pw"}, testbed.AppDatabase) + "&lock_wait_timeout=1"
	return func(timeout time.Duration) error {
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
}

// TestPrivilegedAccountCannotWriteThroughAnOperatorFence: the operator
// fences the active site by SQL (a planned failover's drain, an admin
// fence, an emergency SQL fence) while the site's sidecar still holds a
// fresh view naming it, so its own rule does not fence. The sidecar must
// hold writes all the same: a read-only server that does not replicate is
// held, whoever made it read-only, or a READ_ONLY ADMIN account writes on
// the old primary while the new one is promoted.
func TestPrivilegedAccountCannotWriteThroughAnOperatorFence(t *testing.T) {
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
	write := newDBA(t, c, root)
	if err := write(5 * time.Second); err != nil {
		t.Fatalf("dba writes on the primary: %v", err)
	}

	if err := iad.db.Fence(ctxFor(t, 5*time.Second)); err != nil { // the operator's SQL fence
		t.Fatalf("fence: %v", err)
	}
	eventually(t, 3*fast.tick+slack, "the write hold after the operator's fence", func() bool {
		return iad.runner.Status().WriteHoldSince != nil
	})
	if f := iad.runner.Status().LastFence; f != nil {
		t.Fatalf("the sidecar fenced by its own rule (%s): this test needs a fresh lease", f.Reason)
	}
	for i := range 3 {
		if err := write(3 * time.Second); err == nil {
			t.Fatalf("attempt %d: a READ_ONLY ADMIN account committed after the operator's fence", i+1)
		}
	}
	// The operator makes it writable again: writes flow.
	if err := iad.db.Unfence(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatalf("unfence: %v", err)
	}
	eventually(t, 3*fast.tick+slack+3*time.Second, "dba writes again after the unfence", func() bool { return write(3*time.Second) == nil })
}

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
	write := newDBA(t, c, root)
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
		if err := write(3 * time.Second); err == nil {
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
	if err := write(3 * time.Second); err == nil {
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
