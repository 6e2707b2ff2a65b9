package routing

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Account is one MySQL user name and password. Every account is created for
// any host ('%'): clients reach mysqld through Services and Pod addresses.
type Account struct {
	Username string
	Password string
}

// Credentials are the four accounts of a group, read from their Secrets.
type Credentials struct {
	// Operator may do anything, including changing read_only; the operator
	// and the sidecars use it.
	Operator Account
	// Replication has REPLICATION SLAVE and REPLICATION CLIENT only, and
	// logs in with a client certificate (REQUIRE X509).
	Replication Account
	// ReplicationX509 makes the replication account REQUIRE X509; set when
	// the sites have certificates (the authenticated transport is on).
	ReplicationX509 bool
	// Application has DML and DDL on AppDatabase only: never READ_ONLY
	// ADMIN nor SUPER, so read_only fences it.
	Application Account
	// Monitor can read process and replication status.
	Monitor Account
	// AppDatabase is the schema the application account may use: the
	// application Secret's "database" key, DefaultAppDatabase when absent.
	AppDatabase string
}

// DefaultAppDatabase is the application schema when the application Secret has no "database" key.
const DefaultAppDatabase = "app"

// AppPrivileges are what the application account holds on its schema:
// DML and DDL, nothing global.
const AppPrivileges = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, " +
	"CREATE TEMPORARY TABLES, LOCK TABLES, REFERENCES, CREATE VIEW, SHOW VIEW, TRIGGER, " +
	"EXECUTE, CREATE ROUTINE, ALTER ROUTINE, EVENT"

// RenderInitSQL renders the file mysqld runs through init_file at every
// start. It is idempotent, so running it at every boot is harmless:
//   - sql_log_bin=0 first, so the accounts never reach the binlog and no site
//     ever gets GTIDs of its own from booting (they would be errant);
//   - CREATE USER IF NOT EXISTS, then ALTER USER, so a changed Secret takes
//     effect at the next start;
//   - the application account's privileges are reset (REVOKE ALL) and granted
//     again on its schema only, so it can never keep READ_ONLY ADMIN or SUPER;
//   - the replication account REQUIRE X509: a client certificate from the
//     operator's CA (mysqld's ssl_ca) or no login, over TLS only;
//   - on MySQL, super_read_only is lifted for the file and restored at its end
//     (mysqld runs init_file before it accepts connections).
//
// init_file wants one statement per line and no comments; that is what this writes.
func RenderInitSQL(flavor v1alpha1.Flavor, c Credentials) (string, error) {
	if err := c.validate(); err != nil {
		return "", fmt.Errorf("render init sql: %w", err)
	}
	var s []string
	if flavor == v1alpha1.FlavorMySQL {
		s = append(s, "SET GLOBAL super_read_only=OFF")
	}
	s = append(s, "SET SESSION sql_log_bin=0",
		"CREATE DATABASE IF NOT EXISTS "+quoteIdent(c.AppDatabase))
	s = append(s, account(c.Operator, false, "ALL PRIVILEGES ON *.*", " WITH GRANT OPTION")...)
	s = append(s, account(c.Replication, false, "REPLICATION SLAVE, REPLICATION CLIENT ON *.*", "")...)
	// Replicas log in with their site's certificate only: a stolen
	// replication password alone reads no binlog.
	if c.ReplicationX509 {
		s = append(s, "ALTER USER "+userHost(c.Replication.Username)+" REQUIRE X509")
	}
	s = append(s, account(c.Application, true, AppPrivileges+" ON "+quoteIdent(c.AppDatabase)+".*", "")...)
	s = append(s, account(c.Monitor, false, monitorPrivileges(flavor)+" ON *.*", "")...)
	if flavor == v1alpha1.FlavorMySQL {
		s = append(s, "SET GLOBAL super_read_only=ON")
	}
	return strings.Join(s, ";\n") + ";\n", nil
}

// account creates a user, sets its password, with reset drops every
// privilege it holds, and grants it privileges.
// The order matters: a failing statement ends init_file on MariaDB, which
// then starts anyway, and REVOKE fails on a user that does not exist yet.
func account(a Account, reset bool, privileges, suffix string) []string {
	u := userHost(a.Username)
	s := []string{
		"CREATE USER IF NOT EXISTS " + u + " IDENTIFIED BY " + quoteString(a.Password),
		"ALTER USER " + u + " IDENTIFIED BY " + quoteString(a.Password),
	}
	if reset {
		s = append(s, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM "+u)
	}
	return append(s, "GRANT "+privileges+" TO "+u+suffix)
}

// monitorPrivileges: MariaDB 10.5+ split SHOW REPLICA STATUS out into SLAVE MONITOR.
func monitorPrivileges(flavor v1alpha1.Flavor) string {
	if flavor == v1alpha1.FlavorMySQL {
		return "PROCESS, REPLICATION CLIENT"
	}
	return "PROCESS, REPLICATION CLIENT, SLAVE MONITOR"
}

func (c Credentials) validate() error {
	accounts := []struct {
		role string
		a    Account
	}{
		{AccountOperator, c.Operator}, {AccountReplication, c.Replication},
		{AccountApplication, c.Application}, {AccountMonitor, c.Monitor},
	}
	seen := map[string]string{}
	for _, x := range accounts {
		switch {
		case x.a.Username == "":
			return fmt.Errorf("%s account: empty username", x.role)
		case x.a.Password == "":
			return fmt.Errorf("%s account %q: empty password", x.role, x.a.Username)
		case len(x.a.Username) > 32:
			return fmt.Errorf("%s account %q: usernames longer than 32 characters do not work on MySQL", x.role, x.a.Username)
		}
		if other, dup := seen[x.a.Username]; dup {
			return fmt.Errorf("%s and %s accounts share username %q: each role needs its own", other, x.role, x.a.Username)
		}
		seen[x.a.Username] = x.role
	}
	if c.AppDatabase == "" || len(c.AppDatabase) > 64 || strings.ContainsAny(c.AppDatabase, "\x00\n\r/\\.") {
		return fmt.Errorf("application database %q: want 1 to 64 characters without '.', '/', '\\' or line breaks", c.AppDatabase)
	}
	return nil
}

func userHost(user string) string { return quoteString(user) + "@'%'" }

// quoteString writes a single-quoted SQL string literal that stays on one
// line whatever the value holds (init_file reads one statement per line).
func quoteString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\x00", `\0`, "\x1a", `\Z`)
	return "'" + r.Replace(s) + "'"
}

// quoteIdent writes a backquoted identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
