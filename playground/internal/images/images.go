package images

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shipstream/bloodraven/pkg/reclone"
)

// Arg is the first argument that selects a built-in image: binary Arg NAME ARGS...
const Arg = "localcluster-image"

// Run runs the built-in image name with args; it returns only on failure.
func Run(name string, args []string) error {
	switch name {
	case "mariadb":
		return mariadb(args)
	case "http-echo":
		return httpEcho(args)
	}
	return fmt.Errorf("unknown built-in image %q", name)
}

// mariadb initialises the data folder when it is empty, then becomes mariadbd.
func mariadb(args []string) error {
	// First: a datadir a reclone emptied must not be initialised.
	if err := waitHold(); err != nil {
		return err
	}
	var defaults []string
	if len(args) > 0 && strings.HasPrefix(args[0], "--defaults-file=") {
		defaults, args = args[:1], args[1:]
	}
	datadir := "/var/lib/mysql"
	hasUser := false
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--datadir="); ok {
			datadir = v
		}
		hasUser = hasUser || strings.HasPrefix(a, "--user=")
	}
	if !hasUser {
		args = append([]string{"--user=root"}, args...)
	}
	if _, err := os.Stat(filepath.Join(datadir, "mysql")); os.IsNotExist(err) {
		if err := os.MkdirAll(datadir, 0o750); err != nil {
			return fmt.Errorf("mariadb image: datadir: %w", err)
		}
		init, err := initDatadir(defaults, datadir)
		if err != nil {
			return err
		}
		if init != "" {
			args = append(args, "--init-file="+init)
		}
	}
	prog, err := exec.LookPath("mariadbd")
	if err != nil {
		return fmt.Errorf("mariadb image: %w", err)
	}

	argv := append(append([]string{prog}, defaults...), args...)
	return fmt.Errorf("exec mariadbd: %w", syscall.Exec(prog, argv, os.Environ()))
}

// waitHold honours the sidecar's hold file, when the Pod names one: it
// waits while the file exists, and leaves its lock held shared on a
// descriptor mariadbd inherits (pkg/reclone, HoldFile).
func waitHold() error {
	hold := os.Getenv("BLOODRAVEN_MYSQLD_HOLD_FILE")
	if hold == "" {
		return nil
	}
	_, err := reclone.WaitHold(context.Background(), hold, time.Second, func() {
		fmt.Printf("mariadb image: %s exists, waiting for the sidecar to release mysqld\n", hold)
	})
	if err != nil {
		return fmt.Errorf("mariadb image: %w", err)
	}
	return nil
}

// initDatadir runs mariadb-install-db and returns an init file holding the
// accounts that MARIADB_* variables ask for, or "" when there are none.
func initDatadir(defaults []string, datadir string) (string, error) {
	argv := append(append([]string{}, defaults...), "--datadir="+datadir, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db")
	cmd := exec.Command("mariadb-install-db", argv...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mariadb-install-db: %w", err)
	}
	sql := initSQL()
	if sql == "" {
		return "", nil
	}
	p := filepath.Join(os.TempDir(), "mariadb-init.sql")
	if err := os.WriteFile(p, []byte(sql), 0o600); err != nil {
		return "", fmt.Errorf("write init file: %w", err)
	}
	return p, nil
}

func initSQL() string {
	var b strings.Builder
	q := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) }
	if pw := os.Getenv("MARIADB_ROOT_PASSWORD"); pw != "" {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n", q(pw))
		fmt.Fprintf(&b, "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\n", q(pw))
	}
	if db := os.Getenv("MARIADB_DATABASE"); db != "" {
		fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS `%s`;\n", strings.ReplaceAll(db, "`", ""))
	}
	if u, pw := os.Getenv("MARIADB_USER"), os.Getenv("MARIADB_PASSWORD"); u != "" {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s';\n", q(u), q(pw))
		if db := os.Getenv("MARIADB_DATABASE"); db != "" {
			fmt.Fprintf(&b, "GRANT ALL ON `%s`.* TO '%s'@'%%';\n", strings.ReplaceAll(db, "`", ""), q(u))
		}
	}
	return b.String()
}

// httpEcho serves GET / with the Pod's name and IP, /healthz, and
// /status/CODE answering with that status (for failing probes). It listens
// on --listen=ADDR, or :$PORT, or :8080.
func httpEcho(args []string) error {
	addr := ":8080"
	if p := os.Getenv("PORT"); p != "" {
		addr = ":" + p
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			addr = v
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pod=%s namespace=%s ip=%s path=%s\n", os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE"), os.Getenv("POD_IP"), r.URL.Path)
	})
	fmt.Printf("http-echo listening on %s\n", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.ListenAndServe()
}
