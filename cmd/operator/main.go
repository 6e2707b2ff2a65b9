package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/routing"
)

type flags struct {
	leaderElect      bool
	leaderElectionNS string
	leaderElectionID string
	namespaces       string
	metricsAddr      string
	probeAddr        string
	apiAddr          string
	logLevel         string
	operatorURL      string
	probeTimeout     time.Duration
	drainTimeout     time.Duration
	callTimeout      time.Duration
	fenceTimeout     time.Duration
	maxLag           time.Duration
	resyncPeriod     time.Duration
	terminationGrace time.Duration
	mysqlImage       string
	sidecarImage     string
	viewKeysNS       string
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "elect a leader so that only one operator acts")
	fs.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader-election Lease (default: in-cluster namespace)")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", "bloodraven.shipstream.io", "name of the leader-election Lease")
	fs.StringVar(&f.namespaces, "namespaces", "", "comma-separated namespaces to watch; empty watches all")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&f.apiAddr, "api-bind-address", ":8090", "address of the /active-site API that sidecars call")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info or error")
	fs.StringVar(&f.operatorURL, "operator-url", "", "base URL sidecars reach the API at (default http://bloodraven.$POD_NAMESPACE.svc:<api port>)")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", 0, "bound of one probe of a site; 0 means the group's pollInterval")
	fs.DurationVar(&f.drainTimeout, "relay-drain-timeout", 30*time.Second, "bound of an emergency failover's wait for the target's relay log")
	fs.DurationVar(&f.callTimeout, "call-timeout", 5*time.Second, "bound of one SQL or Kubernetes call of an action")
	fs.DurationVar(&f.fenceTimeout, "fence-timeout", time.Second, "bound of one SQL fence attempt on an old primary that may not answer")
	fs.DurationVar(&f.maxLag, "max-replica-lag", 30*time.Second, "replica lag above which a group is Degraded")
	fs.DurationVar(&f.resyncPeriod, "resync-period", 5*time.Minute, "re-converge every group's objects at least this often")
	fs.DurationVar(&f.terminationGrace, "site-termination-grace", 0, "termination grace period of site Pods (default pkg/routing's)")
	fs.StringVar(&f.mysqlImage, "mysql-image", "", "override spec.mysql.image of every group")
	fs.StringVar(&f.sidecarImage, "sidecar-image", "", "override spec.sidecar.image of every group")
	fs.StringVar(&f.viewKeysNS, "view-signing-namespace", "", "namespace of the view-signing key Secret (default $POD_NAMESPACE, else bloodraven-system)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.operatorURL == "" {
		f.operatorURL = defaultOperatorURL(f.apiAddr)
	}
	if f.viewKeysNS == "" {
		f.viewKeysNS = ownNamespace()
	}
	return f, nil
}

func defaultOperatorURL(apiAddr string) string {
	port := apiAddr[strings.LastIndex(apiAddr, ":")+1:]
	return fmt.Sprintf("http://bloodraven.%s.svc:%s", ownNamespace(), port)
}

// ownNamespace is $POD_NAMESPACE, else bloodraven-system.
func ownNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "bloodraven-system"
}

func logLevel(s string) (zapcore.Level, error) {
	switch s {
	case "debug":
		return zapcore.DebugLevel, nil
	case "info":
		return zapcore.InfoLevel, nil
	case "error":
		return zapcore.ErrorLevel, nil
	}
	return 0, fmt.Errorf("--log-level %q: want debug, info or error", s)
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	lvl, err := logLevel(f.logLevel)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.Level(lvl)))
	mgr, err := newManager(f)
	if err != nil {
		return err
	}
	if err := wire(mgr, f); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

func newManager(f flags) (ctrl.Manager, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        f.leaderElectionID,
		LeaderElectionNamespace: f.leaderElectionNS,
	}
	if f.namespaces != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(f.namespaces, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				opts.Cache.DefaultNamespaces[ns] = cache.Config{}
			}
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return mgr, nil
}

func wire(mgr ctrl.Manager, f flags) error {
	keys := &controller.ViewKeys{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: f.viewKeysNS,
		Log: ctrl.Log.WithName("view-keys")}
	router := routing.New(mgr.GetClient(), mgr.GetScheme(), routing.Options{OperatorURL: f.operatorURL,
		MySQLImage: f.mysqlImage, SidecarImage: f.sidecarImage, TerminationGracePeriod: f.terminationGrace,
		ViewKeys: keys.PublicPEM})
	op, err := controller.New(controller.Deps{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Router: router,
		Resolver: controller.ServiceResolver{Credentials: router}, Recorder: mgr.GetEventRecorder("bloodraven"),
		Registerer: metrics.Registry, Log: ctrl.Log.WithName("operator"),
	}, controller.Options{ProbeTimeout: f.probeTimeout, DrainTimeout: f.drainTimeout, CallTimeout: f.callTimeout,
		FenceTimeout: f.fenceTimeout, MaxLag: f.maxLag, ResyncPeriod: f.resyncPeriod})
	if err != nil {
		return err
	}
	if err := (&controller.Reconciler{Operator: op}).SetupWithManager(mgr); err != nil {
		return err
	}
	keys.Registry = op.Registry()
	if err := mgr.Add(keys); err != nil {
		return fmt.Errorf("add view keys: %w", err)
	}
	api := &controller.API{Registry: op.Registry(), Elected: mgr.Elected(),
		Ready: func() error { return cacheSynced(mgr) }}
	if err := mgr.Add(&controller.APIServer{Addr: f.apiAddr, Handler: api.Handler()}); err != nil {
		return fmt.Errorf("add api: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("healthz: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", func(*http.Request) error { return api.Ready() }); err != nil {
		return fmt.Errorf("readyz: %w", err)
	}
	return nil
}

// cacheSynced is the readiness check: the manager's cache has synced.
func cacheSynced(mgr ctrl.Manager) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("cache not synced yet")
	}
	return nil
}
