package testbed

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// appPrivileges are DML and DDL, granted on AppDatabase only.
const appPrivileges = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, " +
	"CREATE TEMPORARY TABLES, LOCK TABLES, REFERENCES, CREATE VIEW, SHOW VIEW, TRIGGER, " +
	"EXECUTE, CREATE ROUTINE, ALTER ROUTINE, EVENT"

// createAccounts adds the accounts and the app schema without writing the
// binlog, so every instance starts with the same, empty GTID state.
func (c *MariaDBCluster) createAccounts(n *mariadbNode) error {
	a := c.Accounts
	stmts := []string{"SET SESSION sql_log_bin=0"}
	user := func(acc Account, grants, suffix string) {
		stmts = append(stmts,
			fmt.Sprintf("CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s", quote(acc.User), quote(acc.Password)),
			fmt.Sprintf("GRANT %s TO %s@'%%'%s", grants, quote(acc.User), suffix))
	}
	user(a.Operator, "ALL PRIVILEGES ON *.*", " WITH GRANT OPTION")
	user(a.Replication, "REPLICATION SLAVE, REPLICATION CLIENT ON *.*", "")
	user(a.Application, appPrivileges+" ON `"+AppDatabase+"`.*", "")
	user(a.Monitor, "PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT ON *.*", "")
	stmts = append(stmts, "CREATE DATABASE IF NOT EXISTS `"+AppDatabase+"`")
	return rootSession(n, func(ctx context.Context, conn *sql.Conn) error {
		for _, s := range stmts {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: accounts: %q: %w", n.name(), s, err)
			}
		}
		return nil
	})
}

// wireReplication makes instance 0 writable and points the others at it.
func (c *MariaDBCluster) wireReplication() error {
	err := rootSession(c.nodes[0], func(ctx context.Context, conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, "SET GLOBAL read_only=OFF")
		return err
	})
	if err != nil {
		return fmt.Errorf("mariadb-0: make writable: %w", err)
	}
	return parallel(len(c.nodes)-1, func(i int) error { return c.replicate(c.nodes[i+1], 0) })
}

// replicate points n at instance src with MASTER_USE_GTID=slave_pos and
// waits until both replication threads run.
func (c *MariaDBCluster) replicate(n *mariadbNode, src int) error {
	r := c.Accounts.Replication
	change := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%d, MASTER_USER=%s, "+
		"MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
		quote(Host), c.nodes[src].port, quote(r.User), quote(r.Password))
	return rootSession(n, func(ctx context.Context, conn *sql.Conn) error {
		for _, s := range []string{change, "START REPLICA"} {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", n.name(), err)
			}
		}
		return waitReplicating(ctx, conn, n)
	})
}

func waitReplicating(ctx context.Context, conn *sql.Conn, n *mariadbNode) error {
	for {
		st, err := replicaStatus(ctx, conn)
		if err != nil {
			return fmt.Errorf("%s: %w", n.name(), err)
		}
		if st["Slave_IO_Running"] == "Yes" && st["Slave_SQL_Running"] == "Yes" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: replication not running (IO %q, SQL %q, %s %s): %w",
				n.name(), st["Slave_IO_Running"], st["Slave_SQL_Running"],
				st["Last_IO_Error"], st["Last_SQL_Error"], ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// replicaStatus returns SHOW REPLICA STATUS as column -> value (empty when
// no replication is configured).
func replicaStatus(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, "SHOW REPLICA STATUS")
	if err != nil {
		return nil, fmt.Errorf("show replica status: %w", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("show replica status: %w", err)
	}
	out := map[string]string{}
	if !rows.Next() {
		return out, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("show replica status: %w", err)
	}
	for i, col := range cols {
		out[col] = vals[i].String
	}
	return out, rows.Err()
}

// rootSession runs f on one root connection over the socket, within 30 s.
func rootSession(n *mariadbNode, f func(context.Context, *sql.Conn) error) error {
	db, err := sql.Open("mysql", n.rootDSN()+"?timeout=5s")
	if err != nil {
		return fmt.Errorf("%s: %w", n.name(), err)
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: connect as root: %w", n.name(), err)
	}
	defer func() { _ = conn.Close() }()
	return f(ctx, conn)
}

// quote makes a SQL string literal; the test bed's own names need no more.
func quote(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
