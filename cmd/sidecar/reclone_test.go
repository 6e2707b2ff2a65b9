package main

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// TestParseOptionsReclone: the reclone endpoint is off without
// -reclone-data-dir, and a sidecar asked for it without everything it
// needs does not start, saying what is missing.
func TestParseOptionsReclone(t *testing.T) {
	base := []string{"-group", "orders", "-site", "iad", "-operator-url", "https://op", "-tls-dir", "/t", "-health-listen", ":9",
		"-peers", "pdx=https://pdx:8080/", "-mariadb-backup", "/bin/true", "-mbstream", "/bin/true"}
	full := append(append([]string{}, base...), "-reclone-data-dir", "/v/data", "-reclone-preserve-root", "/v/preserved",
		"-reclone-dir", "/v/reclone", "-mysqld-hold-file", "/run/mysqld/hold")
	with := func(args []string, more ...string) []string { return append(append([]string{}, args...), more...) }
	without := func(args []string, flags ...string) []string {
		var out []string
		for i := 0; i < len(args); i += 2 {
			drop := false
			for _, f := range flags {
				drop = drop || args[i] == f
			}
			if !drop {
				out = append(out, args[i], args[i+1])
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" for success
	}{
		{"off by default", base, ""},
		{"on", full, ""},
		{"a reclone flag without the datadir", with(base, "-mysqld-hold-file", "/h"), "needs -reclone-data-dir"},
		{"no hold file", without(full, "-mysqld-hold-file"), "needs -mysqld-hold-file"},
		{"no preservation root or state folder", without(full, "-reclone-preserve-root", "-reclone-dir"),
			"needs -reclone-preserve-root, -reclone-dir"},
		{"no TLS", without(full, "-tls-dir", "-health-listen"), "needs -tls-dir"},
		{"no peers", without(full, "-peers"), "needs -peers"},
		{"no mariadb-backup", with(full, "-mariadb-backup", "/nonexistent/mariadb-backup"), "-mariadb-backup"},
		{"no mbstream", with(full, "-mbstream", "/nonexistent/mbstream"), "-mbstream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, env(nil), io.Discard)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (!errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("%v, want a usage error saying %q", err, tc.want)
			case tc.want == "" && (o.reclone != nil) != (tc.name == "on"):
				t.Fatalf("reclone %+v", o.reclone)
			}
		})
	}
}

// TestRecloneExecutorRefusesABadLayout: a preservation root inside the
// datadir would be moved aside with it: the sidecar does not start.
func TestRecloneExecutorRefusesABadLayout(t *testing.T) {
	dir := t.TempDir()
	o, err := parseOptions([]string{"-group", "orders", "-site", "iad", "-operator-url", "https://op", "-tls-dir", "/t",
		"-health-listen", ":9", "-peers", "pdx=https://pdx:8080", "-mariadb-backup", "/bin/true", "-mbstream", "/bin/true",
		"-reclone-data-dir", filepath.Join(dir, "data"), "-reclone-preserve-root", filepath.Join(dir, "data", "kept"),
		"-reclone-dir", filepath.Join(dir, "reclone"), "-mysqld-hold-file", filepath.Join(dir, "hold")}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysql.Open(mysql.Config{Socket: filepath.Join(dir, "none.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := recloneExecutor(o.reclone, o.sidecar, nil, db, logger); !errors.Is(err, reclone.ErrInvalidConfig) || !errors.Is(err, errUsage) {
		t.Fatalf("%v, want a usage error wrapping ErrInvalidConfig", err)
	}
	o.reclone.preserveRoot = filepath.Join(dir, "preserved")
	e, err := recloneExecutor(o.reclone, o.sidecar, nil, db, logger)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := e.Mysqld.(reclone.HoldFile); !ok || h.Path != filepath.Join(dir, "hold") || len(e.Donors) != 1 || e.Donors[0] != "pdx" {
		t.Fatalf("executor mysqld %+v donors %v", e.Mysqld, e.Donors)
	}
	r, err := e.Receiver("pdx")
	if err != nil || r.URL != "https://pdx:8080/peer/clone" || r.Backup != "/bin/true" {
		t.Fatalf("receiver %+v, %v", r, err)
	}
	if _, err := e.Receiver("fra"); err == nil {
		t.Fatal("a receiver from a site that is not a peer")
	}
}
