package testbed

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/go-sql-driver/mysql" // the driver the test bed talks through
)

// innodbConfig is shared by the template bootstrap and every instance, so a
// copied datadir needs no conversion. innodb_flush_log_at_trx_commit=2 keeps
// acknowledged commits across kill -9 (they sit in the OS page cache), which
// is the only crash the test bed simulates.
const innodbConfig = `innodb_buffer_pool_size=16M
innodb_log_file_size=8M
innodb_log_buffer_size=1M
innodb_flush_log_at_trx_commit=2
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
performance_schema=OFF
skip-name-resolve
`

// mariadbBinaries are the paths of mariadbd and mariadb-install-db.
type mariadbBinaries struct{ server, installDB string }

func findMariaDB() (mariadbBinaries, error) {
	server, err := findBinary("mariadbd")
	if err != nil {
		return mariadbBinaries{}, err
	}
	install, err := findBinary("mariadb-install-db")
	if err != nil {
		return mariadbBinaries{}, err
	}
	return mariadbBinaries{server: server, installDB: install}, nil
}

var tmplCache struct {
	once sync.Once
	dir  string
	err  error
}

// mariadbTemplate returns a datadir bootstrapped by mariadb-install-db once per
// server version, kept in the cache folder. Copying it takes milliseconds
// where a bootstrap takes about two seconds.
func mariadbTemplate(bin mariadbBinaries) (string, error) {
	tmplCache.once.Do(func() {
		tmplCache.dir, tmplCache.err = buildTemplate(bin)
	})
	return tmplCache.dir, tmplCache.err
}

func buildTemplate(bin mariadbBinaries) (string, error) {
	out, err := exec.Command(bin.server, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("mariadb template: %s --version: %w", bin.server, err)
	}
	sum := sha256.Sum256(append(out, innodbConfig...))
	root := filepath.Join(cacheDir(), "testbed", "mariadb-"+hex.EncodeToString(sum[:6]))
	data := filepath.Join(root, "data")
	if _, err := os.Stat(filepath.Join(root, "ok")); err == nil {
		return data, nil
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return "", fmt.Errorf("mariadb template: %w", err)
	}
	work, err := os.MkdirTemp(filepath.Dir(root), "build-")
	if err != nil {
		return "", fmt.Errorf("mariadb template: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	if err := installDB(bin, work); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "ok"), nil, 0o644); err != nil {
		return "", fmt.Errorf("mariadb template: %w", err)
	}
	if err := os.Rename(work, root); err != nil {
		// Another process may have finished first; its template is as good.
		if _, statErr := os.Stat(filepath.Join(root, "ok")); statErr == nil {
			return data, nil
		}
		return "", fmt.Errorf("mariadb template: %w", err)
	}
	return data, nil
}

func installDB(bin mariadbBinaries, work string) error {
	cnf := filepath.Join(work, "my.cnf")
	body := fmt.Sprintf("[mysqld]\nuser=root\ndatadir=%s\ntmpdir=%s\nsocket=%s\nskip-networking\n%s",
		filepath.Join(work, "data"), work, filepath.Join(work, "s.sock"), innodbConfig)
	if err := os.WriteFile(cnf, []byte(body), 0o644); err != nil {
		return fmt.Errorf("mariadb template: %w", err)
	}
	cmd := exec.Command(bin.installDB, "--defaults-file="+cnf, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	return nil
}

// cacheDir is $BLOODRAVEN_CACHE, or bloodraven under the user's cache folder.
func cacheDir() string {
	if d := os.Getenv("BLOODRAVEN_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "bloodraven")
	}
	return filepath.Join(os.TempDir(), "bloodraven-cache")
}

// myCnf renders one instance's configuration.
func (n *mariadbNode) myCnf(o *mariadbOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[client]\nsocket=%s\n\n[mysqld]\nuser=root\n", n.socket)
	fmt.Fprintf(&b, "datadir=%s\ntmpdir=%s\nsocket=%s\npid-file=%s\nlog-error=%s\n",
		n.dataDir, n.tmpDir, n.socket, filepath.Join(n.dir, "mysqld.pid"), n.errLog)
	fmt.Fprintf(&b, "port=%d\nbind-address=127.0.0.1\nserver_id=%d\n", n.port, n.serverID)
	b.WriteString("log_bin=mysql-bin\nrelay_log=relay-bin\nlog_slave_updates=ON\n")
	b.WriteString("binlog_format=ROW\ngtid_strict_mode=ON\ngtid_domain_id=0\nread_only=ON\n")
	fmt.Fprintf(&b, "skip_slave_start=%s\n", onOff(o.skipSlaveStart))
	b.WriteString(innodbConfig)
	for _, l := range o.config {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// errAddrInUse means another process took the port; retry on a new one.
var errAddrInUse = errors.New("port already in use")

// boot starts mariadbd on an existing datadir and waits until it answers.
func (n *mariadbNode) boot(bin mariadbBinaries, timeout time.Duration) error {
	p, err := startProcess(n.name(), filepath.Join(n.dir, "stdout.log"),
		[]string{bin.server, "--defaults-file=" + n.cnf})
	if err != nil {
		return err
	}
	n.proc = p
	if err := n.waitReady(timeout); err != nil {
		p.kill()
		n.proc = nil
		if logSays(n.errLog, "Address already in use") {
			return fmt.Errorf("%s on port %d: %w", n.name(), n.port, errAddrInUse)
		}
		return fmt.Errorf("%s: %w\n%s", n.name(), err, tail(n.errLog, 15))
	}
	return nil
}

// waitReady polls the socket as root until the server answers a query.
func (n *mariadbNode) waitReady(timeout time.Duration) error {
	db, err := sql.Open("mysql", n.rootDSN()+"?timeout=1s")
	if err != nil {
		return fmt.Errorf("wait ready: %w", err)
	}
	defer func() { _ = db.Close() }()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		switch {
		case err == nil:
			return nil
		case n.proc.exited():
			return fmt.Errorf("mariadbd exited during start: %v", n.proc.err)
		case time.Now().After(deadline):
			return fmt.Errorf("not accepting connections after %s: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
