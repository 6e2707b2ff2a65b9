package routing

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func testCredentials() Credentials {
	return Credentials{ReplicationX509: true,
		Operator:    Account{Username: "bloodraven", Password: "op-pw"},
		Replication: Account{Username: "repl", Password: "repl-pw"},
		Application: Account{Username: "app", Password: "app-pw"},
		Monitor:     Account{Username: "monitor", Password: "mon-pw"},
		AppDatabase: "orders",
	}
}

// grantsTo returns the GRANT statements of one user.
func grantsTo(sql, user string) []string {
	var out []string
	for _, l := range strings.Split(sql, "\n") {
		if strings.HasPrefix(l, "GRANT ") && strings.Contains(l, " TO '"+user+"'@") {
			out = append(out, l)
		}
	}
	return out
}

func TestRenderInitSQL(t *testing.T) {
	cases := []struct {
		name    string
		flavor  v1alpha1.Flavor
		edit    func(*Credentials)
		first   string
		last    string
		want    []string
		notWant []string
	}{
		{
			name: "mariadb: no binlog, idempotent accounts, app confined to its schema", flavor: v1alpha1.FlavorMariaDB,
			first: "SET SESSION sql_log_bin=0;",
			want: []string{
				"CREATE DATABASE IF NOT EXISTS `orders`;",
				"CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'app-pw';",
				"ALTER USER 'app'@'%' IDENTIFIED BY 'app-pw';",
				"REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'app'@'%';",
				"GRANT " + AppPrivileges + " ON `orders`.* TO 'app'@'%';",
				"GRANT ALL PRIVILEGES ON *.* TO 'bloodraven'@'%' WITH GRANT OPTION;",
				"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'repl'@'%';",
				"GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO 'monitor'@'%';",
				"ALTER USER 'repl'@'%' REQUIRE X509;",
			},
			notWant: []string{"super_read_only"},
		},
		{
			name: "mysql: super_read_only lifted for the file and restored", flavor: v1alpha1.FlavorMySQL,
			first: "SET GLOBAL super_read_only=OFF;", last: "SET GLOBAL super_read_only=ON;",
			want: []string{"SET SESSION sql_log_bin=0;", "GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'monitor'@'%';",
				"ALTER USER 'repl'@'%' REQUIRE X509;"},
			notWant: []string{"SLAVE MONITOR"},
		},
		{
			name: "quotes, backslashes and line breaks stay inside one line", flavor: v1alpha1.FlavorMariaDB,
			edit: func(c *Credentials) {
				c.Application.Password = "it's\\a\nsecret"
				c.AppDatabase = "we`ird%s"
			},
			want: []string{
				`ALTER USER 'app'@'%' IDENTIFIED BY 'it\'s\\a\nsecret';`,
				"CREATE DATABASE IF NOT EXISTS `we``ird%s`;",
				"GRANT " + AppPrivileges + " ON `we``ird%s`.* TO 'app'@'%';",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCredentials()
			if tc.edit != nil {
				tc.edit(&c)
			}
			sql, err := RenderInitSQL(tc.flavor, c)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(sql, "\n"), "\n")
			if tc.first != "" && lines[0] != tc.first {
				t.Errorf("first statement %q, want %q", lines[0], tc.first)
			}
			if tc.last != "" && lines[len(lines)-1] != tc.last {
				t.Errorf("last statement %q, want %q", lines[len(lines)-1], tc.last)
			}
			for _, w := range tc.want {
				if !containsLine(lines, w) {
					t.Errorf("missing statement %s\n%s", w, sql)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(sql, nw) {
					t.Errorf("unexpected %q in\n%s", nw, sql)
				}
			}
			for _, l := range lines {
				if !strings.HasSuffix(l, ";") || strings.Contains(l, "--") || strings.Contains(l, "/*") {
					t.Errorf("init_file wants one statement per line, no comments: %q", l)
				}
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// A failing statement ends init_file on MariaDB, and REVOKE fails for a user
// that does not exist: on a first boot the user must be created before.
func TestApplicationAccountIsCreatedBeforeItsPrivilegesAreReset(t *testing.T) {
	sql, err := RenderInitSQL(v1alpha1.FlavorMariaDB, testCredentials())
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"CREATE USER IF NOT EXISTS 'app'@", "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'app'@", "GRANT SELECT"}
	last := -1
	for _, stmt := range order {
		i := strings.Index(sql, stmt)
		if i <= last {
			t.Fatalf("%q is not after the statements %q before it:\n%s", stmt, order, sql)
		}
		last = i
	}
}

func TestApplicationAccountNeverHoldsFencePrivileges(t *testing.T) {
	for _, flavor := range []v1alpha1.Flavor{v1alpha1.FlavorMariaDB, v1alpha1.FlavorMySQL} {
		t.Run(string(flavor), func(t *testing.T) {
			sql, err := RenderInitSQL(flavor, testCredentials())
			if err != nil {
				t.Fatal(err)
			}
			grants := grantsTo(sql, "app")
			if len(grants) != 1 {
				t.Fatalf("app grants %q, want exactly one", grants)
			}
			for _, bad := range []string{"READ_ONLY ADMIN", "READ ONLY ADMIN", "SUPER", "ALL PRIVILEGES", "*.*", "GRANT OPTION"} {
				if strings.Contains(grants[0], bad) {
					t.Errorf("application grant holds %s: %s", bad, grants[0])
				}
			}
		})
	}
}

func TestRenderInitSQLRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Credentials)
		want string
	}{
		{"empty username", func(c *Credentials) { c.Monitor.Username = "" }, "monitor account: empty username"},
		{"empty password", func(c *Credentials) { c.Operator.Password = "" }, "empty password"},
		{"shared username", func(c *Credentials) { c.Application.Username = "bloodraven" }, "share username"},
		{"username too long for mysql", func(c *Credentials) { c.Replication.Username = strings.Repeat("r", 33) }, "longer than 32"},
		{"database with a dot", func(c *Credentials) { c.AppDatabase = "a.b" }, "application database"},
		{"database with a line break", func(c *Credentials) { c.AppDatabase = "a\nb" }, "application database"},
		{"no database", func(c *Credentials) { c.AppDatabase = "" }, "application database"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCredentials()
			tc.edit(&c)
			_, err := RenderInitSQL(v1alpha1.FlavorMariaDB, c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestGeneratePassword(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		pw, err := generatePassword(32)
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) != 32 || strings.Trim(pw, passwordAlphabet) != "" {
			t.Fatalf("password %q: want 32 letters and digits", pw)
		}
		if seen[pw] {
			t.Fatalf("password %q drawn twice", pw)
		}
		seen[pw] = true
	}
}

func TestTaintValueIsALabelValue(t *testing.T) {
	cases := []struct{ name, ns, group string }{
		{"short", "db", "orders"},
		{"long", strings.Repeat("n", 63), strings.Repeat("g", 60)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{}
			g.Namespace, g.Name = tc.ns, tc.group
			v := TaintValue(g)
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("TaintValue = %q: %v", v, errs)
			}
			if v != TaintValue(g) {
				t.Errorf("TaintValue not stable")
			}
		})
	}
}
