package testbed

import (
	"database/sql"
	"fmt"
	"time"
)

// DSN is a go-sql-driver DSN for account a on instance i over TCP, with
// database as the default schema ("" for none) and a 5 s dial timeout.
func (c *MariaDBCluster) DSN(i int, a Account, database string) string {
	return fmt.Sprintf("%s:%s@tcp(%s)/%s?timeout=5s", a.User, a.Password, c.Addr(i), database)
}

// OperatorDSN is the operator account's DSN for instance i.
func (c *MariaDBCluster) OperatorDSN(i int) string { return c.DSN(i, c.Accounts.Operator, "") }

// AppDSN is the application account's DSN for instance i, in AppDatabase.
func (c *MariaDBCluster) AppDSN(i int) string {
	return c.DSN(i, c.Accounts.Application, AppDatabase)
}

// MonitorDSN is the monitor account's DSN for instance i.
func (c *MariaDBCluster) MonitorDSN(i int) string { return c.DSN(i, c.Accounts.Monitor, "") }

// RootDSN is root's DSN for instance i, over its unix socket.
func (c *MariaDBCluster) RootDSN(i int) string { return c.nodes[i].rootDSN() + "?timeout=5s" }

// Open opens a pool on instance i for account a in database ("" for none).
// The caller closes it.
func (c *MariaDBCluster) Open(i int, a Account, database string) (*sql.DB, error) {
	db, err := sql.Open("mysql", c.DSN(i, a, database))
	if err != nil {
		return nil, fmt.Errorf("open %s as %s: %w", c.Addr(i), a.User, err)
	}
	return db, nil
}

// Running tells whether instance i's mariadbd is up (it may have crashed).
func (c *MariaDBCluster) Running(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.nodes[i].proc
	return p != nil && !p.exited()
}

// Kill sends SIGKILL to instance i, as a crash would, and waits for the exit.
func (c *MariaDBCluster) Kill(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.kill()
		c.nodes[i].proc = nil
	}
}

// Stop shuts instance i down cleanly (SIGTERM, then SIGKILL after 30 s).
func (c *MariaDBCluster) Stop(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.nodes[i].proc; p != nil {
		p.stop(30 * time.Second)
		c.nodes[i].proc = nil
	}
}

// Start boots a stopped or killed instance i on its old port and datadir and
// waits until it accepts connections. Like every mysqld here it comes back
// read-only; a replica resumes replicating unless WithSkipSlaveStart was given.
// Starting a running instance does nothing.
func (c *MariaDBCluster) Start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[i]
	if n.proc != nil && !n.proc.exited() {
		return nil
	}
	n.proc = nil
	if err := n.boot(c.bin, c.opts.startTimeout); err != nil {
		n.proc = nil
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// Restart stops instance i cleanly if it runs, then starts it again.
func (c *MariaDBCluster) Restart(i int) error {
	c.Stop(i)
	return c.Start(i)
}
