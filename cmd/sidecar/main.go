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
	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
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
	if o.sidecar.StateDir == "" {
		logger.Warn("no -state-dir: a restarted sidecar forgets the highest generation it saw and whether mysqld may be the primary")
	}
	selfUpgradeState(&o.sidecar, logger)
	if o.tlsDir != "" {
		src, err := pki.NewFileSource(o.tlsDir)
		if err != nil {
			return fmt.Errorf("-tls-dir: %w", err)
		}
		o.sidecar.TLS = src
	}
	// The driver logs every connection a fence kills; those are expected.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
	db, err := mysql.Open(o.mysql)
	if err != nil {
		return fmt.Errorf("open mysqld: %w", err)
	}
	defer func() { _ = db.Close() }()
	if o.appLoginUser != "" {
		o.sidecar.AppLogin = appLogin(o.mysql, o.appLoginUser, os.Getenv(envAppLoginPassword))
	}
	if o.reclone != nil {
		if o.sidecar.Reclone, err = recloneExecutor(o.reclone, o.sidecar, o.sidecar.TLS, db, logger); err != nil {
			return err
		}
		o.sidecar.MysqldHoldFile = o.reclone.holdFile
		logger.Info("reclone endpoint on", "datadir", o.reclone.dataDir, "preserve-root", o.reclone.preserveRoot,
			"hold-file", o.reclone.holdFile)
	}
	r, err := sidecar.NewRunner(o.sidecar, db, time.Now())
	if err != nil {
		return err
	}
	ctx, stop := onSignals(r, logger)
	defer stop()
	if o.mysqlTLSDir != "" {
		go certWatcher(o.mysqlTLSDir, db, logger).Run(ctx)
	}
	return serve(ctx, servers(o, r), r, logger)
}

// envAppLoginPassword holds the application account's password for /readyz.
const envAppLoginPassword = envPrefix + "APP_LOGIN_PASSWORD"

// onSignals returns a context that ends when the sidecar should exit.
// SIGTERM (the kubelet terminating the Pod) first runs the termination:
// mysqld fenced, drained and shut down within -stop-delay; a second
// SIGTERM joins it rather than cutting it short. SIGINT exits at once and
// leaves mysqld alone, as before.
func onSignals(r *sidecar.Runner, logger *slog.Logger) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		terminating := false
		for sig := range sigs {
			switch {
			case sig == syscall.SIGINT:
				cancel()
			case terminating:
				logger.Warn("SIGTERM again: the termination already runs")
			default:
				terminating = true
				go func() {
					rep := r.Terminate(context.Background())
					logger.Info("terminated", "how", rep.How, "steps", rep.Steps)
					cancel()
				}()
			}
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }
}

// appLogin logs in to mysqld as the application account and out again.
func appLogin(base mysql.Config, user, password string) func(ctx context.Context) error {
	c := gomysql.NewConfig()
	c.User, c.Passwd = user, password
	c.Net, c.Addr = "tcp", base.Addr
	if base.Socket != "" {
		c.Net, c.Addr = "unix", base.Socket
	}
	return func(ctx context.Context) error {
		conn, err := gomysql.NewConnector(c)
		if err != nil {
			return err
		}
		dc, err := conn.Connect(ctx)
		if err != nil {
			return err
		}
		return dc.Close()
	}
}

// servers are the sidecar's HTTP servers. With TLS: the peer port over
// HTTPS (/peer/...) and the health port in plain HTTP. Without: every
// endpoint on the one plain port, as before, plus the health port if asked.
func servers(o options, r *sidecar.Runner) []*http.Server {
	mk := func(addr string, h http.Handler) *http.Server {
		return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	}
	if o.sidecar.TLS == nil {
		out := []*http.Server{mk(o.listen, r.Handler())}
		if o.health != "" {
			out = append(out, mk(o.health, r.HealthHandler()))
		}
		return out
	}
	peer := mk(o.listen, r.PeerHandler())
	peer.TLSConfig = r.ServerTLS()
	return []*http.Server{peer, mk(o.health, r.HealthHandler())}
}

// serve runs the HTTP servers and the loop until ctx ends or a server fails.
func serve(ctx context.Context, srvs []*http.Server, r *sidecar.Runner, logger *slog.Logger) error {
	errc := make(chan error, len(srvs))
	for _, srv := range srvs {
		go func() {
			var err error
			if srv.TLSConfig != nil {
				err = srv.ListenAndServeTLS("", "")
			} else {
				err = srv.ListenAndServe()
			}
			errc <- fmt.Errorf("http server on %s: %w", srv.Addr, err)
		}()
		logger.Info("listening", "addr", srv.Addr, "tls", srv.TLSConfig != nil)
	}
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); _ = r.Run(ctx) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range srvs {
		_ = srv.Shutdown(shutCtx)
	}
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

// selfUpgradeState gives the sidecar its own executable hash and the state
// a re-exec handed over (pkg/sidecar, handover.go). The handover is taken
// out of the environment at once, so nothing started later inherits it.
func selfUpgradeState(cfg *sidecar.Config, logger *slog.Logger) {
	h, err := exehash.Self()
	if err != nil {
		logger.Warn("own executable hash unknown", "error", err)
	}
	cfg.ExecutableHash = h
	raw := os.Getenv(sidecar.HandoverEnv)
	_ = os.Unsetenv(sidecar.HandoverEnv)
	ho, err := sidecar.DecodeHandover(raw)
	if err != nil {
		logger.Warn("handover unreadable; starting as a fresh boot", "error", err)
		return
	}
	cfg.Handover = ho
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
