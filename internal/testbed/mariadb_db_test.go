//go:build db

package testbed

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestTwoSitesReplicateByGTID(t *testing.T) {
	c := StartMariaDB(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary, replica := open(t, c.AppDSN(0)), open(t, c.AppDSN(1))

	var using string
	st := replicaRow(t, c, 1)
	using = st["Using_Gtid"]
	if using != "Slave_Pos" || st["Master_Port"] != itoa(c.Port(0)) {
		t.Fatalf("replica status: Using_Gtid=%q Master_Port=%q", using, st["Master_Port"])
	}
	mustExec(t, ctx, primary, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
	mustExec(t, ctx, primary, "INSERT INTO t VALUES (1, 'hello')")
	waitRow(t, ctx, replica, 1)

	var pos string
	if err := open(t, c.MonitorDSN(1)).QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	if pos != "0-1-2" {
		t.Fatalf("replica gtid_slave_pos = %q, want 0-1-2 (two transactions from server 1)", pos)
	}

	_, err := replica.ExecContext(ctx, "INSERT INTO t VALUES (2, 'nope')")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1290 {
		t.Fatalf("app write on read-only replica: got %v, want error 1290", err)
	}
}

func TestKilledReplicaComesBackReadOnlyAndReplicating(t *testing.T) {
	c := StartMariaDB(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary := open(t, c.AppDSN(0))
	mustExec(t, ctx, primary, "CREATE TABLE t (id INT PRIMARY KEY)")
	c.Kill(1)
	if c.Running(1) {
		t.Fatal("instance 1 still running after Kill")
	}
	mustExec(t, ctx, primary, "INSERT INTO t VALUES (1)")
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	replica := open(t, c.AppDSN(1))
	waitRow(t, ctx, replica, 1)
	var ro int
	if err := replica.QueryRowContext(ctx, "SELECT @@read_only").Scan(&ro); err != nil || ro != 1 {
		t.Fatalf("restarted replica read_only=%d err=%v, want 1", ro, err)
	}
}

func TestRedisStartsKillsRestarts(t *testing.T) {
	r := StartRedis(t, 2)
	for i := range r.N() {
		if err := ping(r.Addr(i)); err != nil {
			t.Fatalf("redis %d: %v", i, err)
		}
	}
	r.Kill(1)
	if err := ping(r.Addr(1)); err == nil {
		t.Fatal("killed redis still answers")
	}
	if err := r.Restart(1); err != nil {
		t.Fatal(err)
	}
	if err := ping(r.Addr(1)); err != nil {
		t.Fatalf("restarted redis: %v", err)
	}
}

func replicaRow(t *testing.T, c *MariaDBCluster, i int) map[string]string {
	t.Helper()
	var st map[string]string
	err := rootSession(c.nodes[i], func(ctx context.Context, conn *sql.Conn) error {
		var err error
		st, err = replicaStatus(ctx, conn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustExec(t *testing.T, ctx context.Context, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// waitRow polls until row id is visible in t.
func waitRow(t *testing.T, ctx context.Context, db *sql.DB, id int) {
	t.Helper()
	for {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE id = ?", id).Scan(&n)
		if err == nil && n == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("row %d never replicated (last error %v)", id, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
