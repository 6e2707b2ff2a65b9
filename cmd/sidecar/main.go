// Command sidecar runs next to every mysqld of a failover group: it caches the
// operator's view of the active site, gossips it with the other sites'
// sidecars and fences its mysqld when the view or the lease says so. See
// docs/sidecar.md; the logic lives in pkg/sidecar.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/pkg/certreload"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func main() {
	if err := run(os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	o, err := parseOptions(args, os.Getenv, os.Stderr)
	if err != nil {
		return err
	}
	logger, err := newLogger(o.logFormat, o.logLevel, os.Stderr)
	if err != nil {
		return err
	}
	o.sidecar.Logger = logger
	// The driver logs every connection a fence kills; those are expected.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
	db, err := mysql.Open(o.mysql)
	if err != nil {
		return fmt.Errorf("open mysqld: %w", err)
	}
	defer func() { _ = db.Close() }()
	r, err := sidecar.NewRunner(o.sidecar, db, time.Now())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if o.tlsDir != "" {
		go certWatcher(o.tlsDir, db, logger).Run(ctx)
	}
	return serve(ctx, o.listen, r, logger)
}

// serve runs the HTTP server and the loop until ctx ends or the server fails.
func serve(ctx context.Context, addr string, r *sidecar.Runner, logger *slog.Logger) error {
	srv := &http.Server{Addr: addr, Handler: r.Handler(), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); _ = r.Run(ctx) }()
	logger.Info("listening", "addr", addr)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("http server on %s: %w", addr, err)
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	if err != nil {
		return err
	}
	<-loopDone
	return nil
}

// certWatcher has mysqld reload its certificate when the kubelet refreshes
// the mounted Secret in dir, so a rotation needs no restart and no failover.
func certWatcher(dir string, db mysql.Instance, logger *slog.Logger) *certreload.Watcher {
	return &certreload.Watcher{
		Files:  certreload.Files{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")},
		Reload: db.ReloadTLS, Logger: logger.With("component", "certreload"),
	}
}

func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: -log-level %q: %w", errUsage, level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
