package testbed

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Host is the address every test-bed server listens on.
const Host = "127.0.0.1"

// AppDatabase is the schema the application account may use.
const AppDatabase = "app"

// Account is a user name and password, valid from any host ('%').
type Account struct{ User, Password string }

// Accounts are the users every instance gets.
type Accounts struct {
	// Operator has every privilege, including READ_ONLY ADMIN, CONNECTION
	// ADMIN, PROCESS and replication administration.
	Operator Account
	// Replication has REPLICATION SLAVE and REPLICATION CLIENT.
	Replication Account
	// Application has DML and DDL on AppDatabase only: no READ_ONLY ADMIN, no SUPER.
	Application Account
	// Monitor has PROCESS, REPLICATION CLIENT, SLAVE MONITOR and SELECT.
	Monitor Account
}

// DefaultAccounts returns the accounts StartMariaDB creates unless told otherwise.
func DefaultAccounts() Accounts {
	return Accounts{
		Operator:    Account{User: "bloodraven", Password: "operator-pw"},
		Replication: Account{User: "repl", Password: "repl-pw"},
		Application: Account{User: "app", Password: "app-pw"},
		Monitor:     Account{User: "monitor", Password: "monitor-pw"},
	}
}

type mariadbOptions struct {
	accounts       Accounts
	replicate      bool
	skipSlaveStart bool
	config         []string
	startTimeout   time.Duration
}

// MariaDBOption changes how StartMariaDB and NewMariaDB set instances up.
type MariaDBOption func(*mariadbOptions)

// WithoutReplication leaves every instance standalone and read-only.
func WithoutReplication() MariaDBOption { return func(o *mariadbOptions) { o.replicate = false } }

// WithSkipSlaveStart sets skip_slave_start=ON, so a restarted replica does
// not resume replication by itself.
func WithSkipSlaveStart() MariaDBOption { return func(o *mariadbOptions) { o.skipSlaveStart = true } }

// WithConfig appends lines to every instance's [mysqld] section.
func WithConfig(lines ...string) MariaDBOption {
	return func(o *mariadbOptions) { o.config = append(o.config, lines...) }
}

// WithAccounts replaces DefaultAccounts.
func WithAccounts(a Accounts) MariaDBOption { return func(o *mariadbOptions) { o.accounts = a } }

// WithStartTimeout bounds how long one instance may take to accept
// connections (default 60 s: the machines are small and shared).
func WithStartTimeout(d time.Duration) MariaDBOption {
	return func(o *mariadbOptions) { o.startTimeout = d }
}

// MariaDBCluster is N MariaDB instances on 127.0.0.1. Instance 0 starts as
// the writable primary and the others replicate from it by GTID.
type MariaDBCluster struct {
	// Accounts are the users created on every instance.
	Accounts Accounts

	bin   mariadbBinaries
	opts  mariadbOptions
	mu    sync.Mutex // guards the nodes' processes
	nodes []*mariadbNode
	close sync.Once
}

type mariadbNode struct {
	index, serverID, port                     int
	dir, dataDir, tmpDir, socket, cnf, errLog string
	proc                                      *process // nil when not running
}

func (n *mariadbNode) name() string { return fmt.Sprintf("mariadb-%d", n.index) }

func (n *mariadbNode) rootDSN() string { return "root@unix(" + n.socket + ")/" }

// StartMariaDB starts n instances for one test under t.TempDir and stops them
// when the test ends. It fails the test if a server is missing or won't start;
// after a failed test it logs the tail of every instance's error log.
func StartMariaDB(t testing.TB, n int, opts ...MariaDBOption) *MariaDBCluster {
	t.Helper()
	c, err := NewMariaDB(t.TempDir(), n, t, opts...)
	if err != nil {
		t.Fatalf("start mariadb: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, nd := range c.nodes {
				t.Logf("%s error log (%s):\n%s", nd.name(), nd.errLog, tail(nd.errLog, 10))
			}
		}
	})
	return c
}

// NewMariaDB starts n instances with their files under dir, and registers
// their teardown (every process killed, every file removed) with cl. It is
// StartMariaDB for callers that are not tests.
func NewMariaDB(dir string, n int, cl Cleaner, opts ...MariaDBOption) (*MariaDBCluster, error) {
	if n < 1 {
		return nil, errors.New("mariadb: need at least one instance")
	}
	o := mariadbOptions{accounts: DefaultAccounts(), replicate: true, startTimeout: time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	bin, err := findMariaDB()
	if err != nil {
		return nil, err
	}
	tmpl, err := mariadbTemplate(bin)
	if err != nil {
		return nil, err
	}
	c := &MariaDBCluster{Accounts: o.accounts, bin: bin, opts: o}
	cl.Cleanup(c.Close)
	if err := c.layout(dir, n, cl); err != nil {
		return nil, err
	}
	if err := parallel(n, func(i int) error { return c.create(c.nodes[i], tmpl) }); err != nil {
		return nil, err
	}
	if o.replicate {
		if err := c.wireReplication(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// layout names every instance's files. Sockets go to a short folder of their
// own, because test temp paths can exceed the 107-byte limit of socket paths.
func (c *MariaDBCluster) layout(dir string, n int, cl Cleaner) error {
	sockDir, err := os.MkdirTemp("", "brdb")
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	cl.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("mariadb-%d", i))
		cl.Cleanup(func() { _ = os.RemoveAll(d) })
		c.nodes = append(c.nodes, &mariadbNode{
			index: i, serverID: i + 1, dir: d,
			dataDir: filepath.Join(d, "data"), tmpDir: filepath.Join(d, "tmp"),
			socket: filepath.Join(sockDir, strconv.Itoa(i)+".sock"),
			cnf:    filepath.Join(d, "my.cnf"), errLog: filepath.Join(d, "error.log"),
		})
	}
	return nil
}

// create copies the template datadir, boots the instance (on a new port if
// another process took its port) and adds the accounts.
func (c *MariaDBCluster) create(n *mariadbNode, tmpl string) error {
	if err := os.MkdirAll(n.tmpDir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", n.name(), err)
	}
	if err := os.CopyFS(n.dataDir, os.DirFS(tmpl)); err != nil {
		return fmt.Errorf("%s: copy template datadir: %w", n.name(), err)
	}
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		n.port = port
		if err := os.WriteFile(n.cnf, []byte(n.myCnf(&c.opts)), 0o644); err != nil {
			return fmt.Errorf("%s: %w", n.name(), err)
		}
		err = n.boot(c.bin, c.opts.startTimeout)
		if err == nil {
			break
		}
		if !errors.Is(err, errAddrInUse) || attempt == 3 {
			return err
		}
	}
	return c.createAccounts(n)
}

// parallel runs f for 0..n-1 at once and joins the errors.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close kills every instance. It runs by itself at teardown; calling it
// earlier is allowed and a second call does nothing.
func (c *MariaDBCluster) Close() {
	c.close.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, n := range c.nodes {
			if n.proc != nil {
				n.proc.kill()
				n.proc = nil
			}
		}
	})
}

// N is the number of instances.
func (c *MariaDBCluster) N() int { return len(c.nodes) }

// Port is instance i's TCP port.
func (c *MariaDBCluster) Port(i int) int { return c.nodes[i].port }

// Addr is instance i's "127.0.0.1:port".
func (c *MariaDBCluster) Addr(i int) string {
	return net.JoinHostPort(Host, strconv.Itoa(c.nodes[i].port))
}

// ServerID is instance i's server_id (i+1).
func (c *MariaDBCluster) ServerID(i int) int { return c.nodes[i].serverID }

// Socket is instance i's unix socket, where root logs in without a password.
func (c *MariaDBCluster) Socket(i int) string { return c.nodes[i].socket }

// ConfigFile is instance i's my.cnf; pass it first as --defaults-file.
func (c *MariaDBCluster) ConfigFile(i int) string { return c.nodes[i].cnf }

// DataDir is instance i's datadir.
func (c *MariaDBCluster) DataDir(i int) string { return c.nodes[i].dataDir }

// ErrorLog is instance i's error log.
func (c *MariaDBCluster) ErrorLog(i int) string { return c.nodes[i].errLog }
