//go:build db

package routing

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
)

// bootSite starts one MariaDB with Bloodraven's enforced settings and an
// init_file rendered from creds, the way a site's Pod boots. The test bed
// keeps its own paths and its own (differently named) accounts.
func bootSite(t *testing.T, creds Credentials) (*testbed.MariaDBCluster, string) {
	t.Helper()
	initFile := filepath.Join(t.TempDir(), "init.sql")
	writeInit(t, initFile, creds)
	lines := append(EnforcedSettings(v1alpha1.FlavorMariaDB, "iad"), "init_file="+initFile)
	tb := testbed.Accounts{
		Operator: testbed.Account{User: "tb-operator", Password: "x1"}, Replication: testbed.Account{User: "tb-repl", Password: "x2"},
		Application: testbed.Account{User: "tb-app", Password: "x3"}, Monitor: testbed.Account{User: "tb-monitor", Password: "x4"},
	}
	c := testbed.StartMariaDB(t, 1, testbed.WithoutReplication(), testbed.WithAccounts(tb), testbed.WithConfig(lines...))
	return c, initFile
}

func writeInit(t *testing.T, path string, creds Credentials) {
	t.Helper()
	sql, err := RenderInitSQL(v1alpha1.FlavorMariaDB, creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(sql), 0o600); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, c *testbed.MariaDBCluster, a Account, db string) *sql.DB {
	t.Helper()
	pool, err := c.Open(0, testbed.Account{User: a.Username, Password: a.Password}, db)
	if err != nil {
		t.Fatal(err)
	}
	pool.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = pool.Close() })
	return pool
}

// execErr runs stmt and returns the server's error number, 0 on success.
func execErr(t *testing.T, db *sql.DB, stmt string) uint16 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := db.ExecContext(ctx, stmt)
	var me *mysql.MySQLError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &me):
		return me.Number
	default:
		t.Fatalf("%s: %v", stmt, err)
		return 0
	}
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestSiteBootsFencedWithGTIDAndNoBinlogFromInit(t *testing.T) {
	creds := testCredentials()
	c, _ := bootSite(t, creds)
	op := open(t, c, creds.Operator, "")
	want := map[string]string{
		"@@read_only": "1", "@@gtid_strict_mode": "1", "@@log_slave_updates": "1", "@@binlog_format": "ROW",
		"@@log_bin": "1", "@@gtid_domain_id": "0", "@@server_id": "2816265922", "@@gtid_binlog_pos": "",
	}
	for q, v := range want {
		if got := queryString(t, op, "SELECT "+q); got != v {
			t.Errorf("%s = %q, want %q", q, got, v)
		}
	}
	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, op, "SELECT @@gtid_binlog_pos"); got != "" {
		t.Errorf("a second boot left GTIDs %q: the init file must not reach the binlog", got)
	}
}

func TestApplicationAccountIsFencedByReadOnly(t *testing.T) {
	creds := testCredentials()
	c, _ := bootSite(t, creds)
	op, app := open(t, c, creds.Operator, ""), open(t, c, creds.Application, creds.AppDatabase)
	const errReadOnly, errDenied, errDBDenied, errTableDenied = 1290, 1227, 1044, 1142
	steps := []struct {
		who  string
		db   *sql.DB
		stmt string
		want uint16
	}{
		{"app", app, "CREATE TABLE t (id INT PRIMARY KEY)", errReadOnly},
		{"app", app, "SET GLOBAL read_only=OFF", errDenied},
		{"operator", op, "SET GLOBAL read_only=OFF", 0},
		{"app", app, "CREATE TABLE t (id INT PRIMARY KEY)", 0},
		{"app", app, "INSERT INTO t VALUES (1)", 0},
		{"app", app, "CREATE DATABASE other", errDBDenied},
		{"app", app, "DELETE FROM mysql.global_priv", errTableDenied},
		{"operator", op, "SET GLOBAL read_only=ON", 0},
		{"app", app, "INSERT INTO t VALUES (2)", errReadOnly},
	}
	for _, st := range steps {
		if got := execErr(t, st.db, st.stmt); got != st.want {
			t.Errorf("%s: %s: error %d, want %d", st.who, st.stmt, got, st.want)
		}
	}
	grants := queryString(t, app, "SELECT GROUP_CONCAT(PRIVILEGE_TYPE) FROM information_schema.USER_PRIVILEGES")
	for _, bad := range []string{"SUPER", "READ ONLY ADMIN", "READ_ONLY ADMIN"} {
		if strings.Contains(grants, bad) {
			t.Errorf("application account holds %s globally: %s", bad, grants)
		}
	}
	mon := open(t, c, creds.Monitor, "")
	if n := execErr(t, mon, "SHOW REPLICA STATUS"); n != 0 {
		t.Errorf("monitor: SHOW REPLICA STATUS: error %d", n)
	}
}

func TestChangedSecretTakesEffectAtNextBoot(t *testing.T) {
	creds := testCredentials()
	c, initFile := bootSite(t, creds)
	op := open(t, c, creds.Operator, "")
	if n := execErr(t, op, "SET GLOBAL read_only=OFF"); n != 0 {
		t.Fatalf("unfence: %d", n)
	}
	if n := execErr(t, open(t, c, creds.Application, creds.AppDatabase), "CREATE TABLE t (id INT)"); n != 0 {
		t.Fatalf("app write: %d", n)
	}
	before := queryString(t, op, "SELECT @@gtid_binlog_pos")
	old := creds.Application
	creds.Application.Password = "rotated'pw\\"
	writeInit(t, initFile, creds)
	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, op, "SELECT @@read_only"); got != "1" {
		t.Errorf("read_only after restart = %s, want 1: every boot is fenced", got)
	}
	if got := queryString(t, op, "SELECT @@gtid_binlog_pos"); got != before {
		t.Errorf("gtid_binlog_pos %q -> %q across a boot: the init file wrote the binlog", before, got)
	}
	if err := open(t, c, creds.Application, creds.AppDatabase).Ping(); err != nil {
		t.Errorf("new application password refused: %v", err)
	}
	if err := open(t, c, old, creds.AppDatabase).Ping(); err == nil {
		t.Errorf("old application password still accepted")
	}
}

// TestMyCnfParsesOnMariaDB hands the whole rendered my.cnf, paths and
// defaults included, to mariadbd's option parser, which rejects any unknown
// option, and reads back the values it ends up with.
func TestMyCnfParsesOnMariaDB(t *testing.T) {
	server, err := exec.LookPath("mariadbd")
	if err != nil {
		t.Fatalf("mariadbd not found (apt-get install mariadb-server): %v", err)
	}
	dir := t.TempDir()
	paths := cnfPaths{DataDir: dir, Socket: filepath.Join(dir, "s.sock"), PIDFile: filepath.Join(dir, "pid"),
		InitFile: filepath.Join(dir, "init.sql"), Port: 3306, TLS: TLSFiles{
			CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key")}}
	cnf := filepath.Join(dir, "my.cnf")
	body := renderMyCnf(v1alpha1.FlavorMariaDB, "iad",
		"max_connections=77\nread_only=OFF\nsync_binlog=0\ninnodb_flush_log_at_trx_commit=2\nrelay_log_recovery=OFF",
		v1alpha1.MySQLTLSSpec{RequireSecureTransport: true}, paths)
	if err := os.WriteFile(cnf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(server, "--defaults-file="+cnf, "--verbose", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadbd rejects the rendered my.cnf: %v\n%s\n%s", err, lastLines(string(out), 5), body)
	}
	vals := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			vals[f[0]] = f[1]
		}
	}
	want := map[string]string{"read-only": "TRUE", "gtid-strict-mode": "TRUE", "log-slave-updates": "TRUE",
		"binlog-format": "ROW", "server-id": iadServerID, "skip-name-resolve": "TRUE", "bind-address": "0.0.0.0",
		"max-connections": "77", "init-file": paths.InitFile, "socket": paths.Socket, "datadir": dir + "/",
		"sync-binlog": "1", "innodb-flush-log-at-trx-commit": "1", "relay-log-recovery": "TRUE",
		"ssl-ca": paths.TLS.CA, "ssl-cert": paths.TLS.Cert, "ssl-key": paths.TLS.Key, "require-secure-transport": "TRUE"}
	for k, v := range want {
		if vals[k] != v {
			t.Errorf("%s = %q, want %q", k, vals[k], v)
		}
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
