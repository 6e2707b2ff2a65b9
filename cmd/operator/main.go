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
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/grouploop"
	"github.com/shipstream/bloodraven/pkg/pki/casecret"
	"github.com/shipstream/bloodraven/pkg/routing"
)

type flags struct {
	leaderElect      bool
	leaderElectionNS string
	leaderElectionID string
	leaderIdentity   string
	namespaces       string
	metricsAddr      string
	probeAddr        string
	apiAddr          string
	apiTLSAddr       string
	caSecret         string
	tlsDNSNames      string
	networkPolicy    bool
	operatorLabels   string
	logLevel         string
	operatorURL      string
	probeTimeout     time.Duration
	drainTimeout     time.Duration
	callTimeout      time.Duration
	fenceTimeout     time.Duration
	maxLag           time.Duration
	resyncPeriod     time.Duration
	stallTimeout     time.Duration
	terminationGrace time.Duration
	mysqlImage       string
	sidecarImage     string
	sidecarBinary    string
	viewKeysNS       string
	reclone          bool
	mysqldEntrypoint string
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "elect a leader so that only one operator acts")
	fs.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader-election Lease (default: in-cluster namespace)")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", "bloodraven.shipstream.io", "name of the leader-election Lease")
	fs.StringVar(&f.leaderIdentity, "leader-election-identity", os.Getenv("POD_NAME"), "name to hold the Lease under, stable across restarts of one Pod (default $POD_NAME, else host name and a random suffix)")
	fs.StringVar(&f.namespaces, "namespaces", "", "comma-separated namespaces to watch; empty watches all")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 disables it")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&f.apiAddr, "api-bind-address", ":8090", "plain-HTTP address of /active-site: views, and reports of sidecars that predate TLS until their group switches; 0 disables it")
	fs.StringVar(&f.apiTLSAddr, "api-tls-bind-address", ":8091", "HTTPS address of /active-site; reports need the site's client certificate")
	fs.StringVar(&f.caSecret, "ca-secret", casecret.Name, "Secret in the operator's namespace that holds the CA (created when absent)")
	fs.StringVar(&f.tlsDNSNames, "tls-dns-names", "", "extra comma-separated DNS names of the API's serving certificate")
	fs.BoolVar(&f.networkPolicy, "network-policy", true, "render a NetworkPolicy for every group")
	fs.BoolVar(&f.reclone, "reclone", false, "lay site Pods out so that their sidecars carry out reclones (docs/recovery.md); a change restarts every site in order")
	fs.StringVar(&f.mysqldEntrypoint, "mysqld-entrypoint", "docker-entrypoint.sh", "the mysqld image's entrypoint, run by the hold-file wrapper with -reclone (empty: the image honours $BLOODRAVEN_MYSQLD_HOLD_FILE itself)")
	fs.StringVar(&f.operatorLabels, "operator-pod-labels", "app.kubernetes.io/name=bloodraven", "labels k=v,... that select the operator's Pods in groups' NetworkPolicies")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info or error")
	fs.StringVar(&f.operatorURL, "operator-url", "", "base URL sidecars reach the API at (default https://bloodraven.$POD_NAMESPACE.svc:<api tls port>)")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", 0, "bound of one probe of a site; 0 means the group's pollInterval")
	fs.DurationVar(&f.drainTimeout, "relay-drain-timeout", 30*time.Second, "bound of an emergency failover's wait for the target's relay log")
	fs.DurationVar(&f.callTimeout, "call-timeout", 5*time.Second, "bound of one SQL or Kubernetes call of an action")
	fs.DurationVar(&f.fenceTimeout, "fence-timeout", time.Second, "bound of one SQL fence attempt on an old primary that may not answer")
	fs.DurationVar(&f.maxLag, "max-replica-lag", 30*time.Second, "replica lag above which a group is Degraded")
	fs.DurationVar(&f.resyncPeriod, "resync-period", 5*time.Minute, "re-converge every group's objects at least this often")
	fs.DurationVar(&f.stallTimeout, "loop-stall-timeout", 0, "a group's poll loop that completes no pass for this long fails /healthz; 0 means, per group, 3 poll intervals + the longest pass its spec allows (drain, salvage, fences, arms, 16 calls)")
	fs.DurationVar(&f.terminationGrace, "site-termination-grace", 0, "termination grace period of site Pods (default pkg/routing's)")
	fs.StringVar(&f.mysqlImage, "mysql-image", "", "override spec.mysql.image of every group")
	fs.StringVar(&f.sidecarImage, "sidecar-image", "", "override spec.sidecar.image of every group")
	fs.StringVar(&f.sidecarBinary, "sidecar-binary", "", "the sidecar binary this operator ships: its hash marks sidecars stale, and in-place upgrades send it (empty: neither)")
	fs.StringVar(&f.viewKeysNS, "view-signing-namespace", "", "namespace of the view-signing key Secret (default $POD_NAMESPACE, else bloodraven-system)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.operatorURL == "" {
		f.operatorURL = defaultOperatorURL(f.apiTLSAddr)
	}
	if f.viewKeysNS == "" {
		f.viewKeysNS = operatorNamespace()
	}
	return f, nil
}

func defaultOperatorURL(apiAddr string) string {
	port := apiAddr[strings.LastIndex(apiAddr, ":")+1:]
	return fmt.Sprintf("https://bloodraven.%s.svc:%s", operatorNamespace(), port)
}

// operatorNamespace is $POD_NAMESPACE, else bloodraven-system.
func operatorNamespace() string {
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
	// Milliseconds in every line's time: a failover's steps are that close.
	ctrl.SetLogger(zap.New(zap.Level(lvl), func(o *zap.Options) { o.TimeEncoder = zapcore.RFC3339NanoTimeEncoder }))
	mgr, lock, err := newManager(f)
	if err != nil {
		return err
	}
	if err := wire(mgr, f, leadership(lock)); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

func newManager(f flags) (ctrl.Manager, resourcelock.Interface, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, nil, err
	}
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        f.leaderElectionID,
		LeaderElectionNamespace: f.leaderElectionNS,
		// On a graceful stop the Lease is handed back, so the next Pod
		// leads at once; main exits as soon as the manager returns.
		LeaderElectionReleaseOnCancel: true,
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
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	var lock resourcelock.Interface
	if f.leaderElect {
		if lock, err = newLeaderLock(cfg, f); err != nil {
			return nil, nil, err
		}
		opts.LeaderElectionResourceLockInterface = lock
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("manager: %w", err)
	}
	return mgr, lock, nil
}

// selfHash is the SHA-256 of the operator's own binary, "" when unreadable.
func selfHash() string {
	h, err := exehash.Self()
	if err != nil {
		ctrl.Log.Error(err, "own executable hash unknown")
	}
	return h
}

func wire(mgr ctrl.Manager, f flags, leader authority.Leadership) error {
	keys := &authority.ViewKeys{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: f.viewKeysNS,
		Log: ctrl.Log.WithName("view-keys")}
	keeper, err := newKeeper(mgr, f)
	if err != nil {
		return err
	}
	ropts := routing.Options{OperatorURL: f.operatorURL, MySQLImage: f.mysqlImage, SidecarImage: f.sidecarImage,
		TerminationGracePeriod: f.terminationGrace, CA: keeper.CA, ViewKeys: keys.PublicPEM}
	if f.reclone {
		ropts.Reclone = &routing.RecloneOptions{Entrypoint: strings.Fields(f.mysqldEntrypoint)}
	}
	if f.networkPolicy {
		labels, err := parseLabels(f.operatorLabels)
		if err != nil {
			return err
		}
		ropts.NetworkPolicy = &routing.NetworkPolicyOptions{OperatorNamespace: operatorNamespace(), OperatorPodLabels: labels}
	}
	router := routing.New(mgr.GetClient(), mgr.GetScheme(), ropts)
	recorder := mgr.GetEventRecorder("bloodraven")
	auth := authority.NewReportAuth(keeper.Pool, mgr.GetClient(), recorder, metrics.Registry,
		ctrl.Log.WithName("api"))
	op, err := controller.New(controller.Deps{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Router: router,
		Resolver: grouploop.ServiceResolver{Credentials: router, TLS: router}, Recorder: recorder,
		Registerer: metrics.Registry, Log: ctrl.Log.WithName("operator"), Auth: auth, Credentials: keeper,
		Leadership: leader, SidecarBinary: f.sidecarBinary,
		// Sidecars without the reclone endpoint answer 404: their
		// reclones fail with RecloneUnavailable, nothing touched.
		Recloner: controller.NewHTTPRecloner(nil, keeper),
	}, controller.Options{ProbeTimeout: f.probeTimeout, DrainTimeout: f.drainTimeout, CallTimeout: f.callTimeout,
		FenceTimeout: f.fenceTimeout, MaxLag: f.maxLag, ResyncPeriod: f.resyncPeriod, OperatorExecutableHash: selfHash(),
		StallTimeout: f.stallTimeout})
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
	api := &authority.API{Registry: op.Registry(), Elected: mgr.Elected(),
		Ready: func() error { return ready(mgr, op) }, Auth: auth}
	if err := addAPIServers(mgr, f, api.Handler(), keeper); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("loops", func(*http.Request) error { return op.Healthy() }); err != nil {
		return fmt.Errorf("healthz: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", func(*http.Request) error { return api.Ready() }); err != nil {
		return fmt.Errorf("readyz: %w", err)
	}
	return nil
}

// ready is the readiness check: the manager's cache has synced, this
// replica leads and its loops have read every group (controller.Ready).
func ready(mgr ctrl.Manager, op *controller.Operator) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("cache not synced yet")
	}
	return op.Ready(ctx)
}
