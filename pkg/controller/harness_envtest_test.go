//go:build envtest

package controller_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/grouploop"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// cp is the control plane every test of the package shares.
var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

// Test timings: short, with bounds that hold on a loaded two-core machine.
const (
	pollInterval      = 250 * time.Millisecond
	failureThreshold  = 3
	leaseTimeout      = 1500 * time.Millisecond
	peerCheckInterval = 500 * time.Millisecond
	cooldown          = time.Minute
	detection         = failureThreshold * pollInterval
)

var nsCounter atomic.Int32

// env is one test's world: a namespace, MariaDB sites, the group, and an operator.
type env struct {
	t     testing.TB // a test, or a benchmark (make bench-planned)
	ns    string
	db    *testbed.MariaDBCluster
	sites []string
	group *v1alpha1.MysqlFailoverGroup
	// addrs overrides the address the operator reaches a site at (a proxy).
	mu    sync.Mutex
	addrs map[string]string
	op    *operatorRun
	// api is the operator's stable address for sidecars; it forwards to the
	// running operator's API (503 while none runs).
	api     *httptest.Server
	apiImpl atomic.Pointer[http.Handler]

	// sidecarURLs are the running sidecars' addresses, which the operator
	// nudges (guarded by mu); sidecarTimings, when set, replace the test
	// timings of the sidecars (nudge_envtest_test.go).
	sidecarURLs    map[string]string
	sidecarTimings *sidecarTimings
}

// newEnv starts len(sites) MariaDB instances (the first one the writable
// primary) and creates a namespace and the group's fake Pods.
func newEnv(t testing.TB, sites ...string) *env {
	t.Helper()
	return newEnvWith(t, nil, sites...)
}

// newEnvWith is newEnv with the test bed's options.
func newEnvWith(t testing.TB, opts []testbed.MariaDBOption, sites ...string) *env {
	t.Helper()
	e := &env{t: t, ns: fmt.Sprintf("t%d-%d", os.Getpid()%1000, nsCounter.Add(1)), sites: sites,
		addrs: map[string]string{}}
	e.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := e.apiImpl.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "operator down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(e.api.Close)
	e.db = testbed.StartMariaDB(t, len(sites), opts...)
	if err := cp.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	return e
}

func (e *env) index(site string) int {
	for i, s := range e.sites {
		if s == site {
			return i
		}
	}
	e.t.Fatalf("unknown site %s", site)
	return -1
}

// Resolve maps each site to its test-bed instance (or its proxy).
func (e *env) Resolve(_ context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (grouploop.SiteAccess, error) {
	if g.Namespace != e.ns {
		return grouploop.SiteAccess{}, fmt.Errorf("group %s/%s is not this test's", g.Namespace, g.Name)
	}
	i := e.index(site)
	acc := e.db.Accounts
	creds := routing.Credentials{
		Operator:    routing.Account{Username: acc.Operator.User, Password: acc.Operator.Password},
		Replication: routing.Account{Username: acc.Replication.User, Password: acc.Replication.Password},
		Application: routing.Account{Username: acc.Application.User, Password: acc.Application.Password},
		Monitor:     routing.Account{Username: acc.Monitor.User, Password: acc.Monitor.Password},
	}
	sa := grouploop.AccessFor(g, testbed.Host, e.db.Port(i), creds)
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := e.addrs[site]; ok {
		sa.Config.Addr = a
	}
	sa.Config.DialTimeout = time.Second
	return sa, nil
}

// createGroup creates the group with the test timings and one fake Pod per
// site. It is sent as unstructured JSON so that the server applies the CRD's
// defaults to every field the test leaves out.
func (e *env) createGroup(mod func(spec map[string]any)) {
	e.t.Helper()
	var sites []any
	for _, s := range e.sites {
		sites = append(sites, map[string]any{"name": s, "zone": "zone-" + s})
	}
	spec := map[string]any{
		"sites":             sites,
		"mysql":             map[string]any{"flavor": string(v1alpha1.FlavorMariaDB)},
		"pollInterval":      pollInterval.String(),
		"failureThreshold":  failureThreshold,
		"recoveryThreshold": 2,
		"failoverCooldown":  cooldown.String(),
		"sidecar":           map[string]any{"leaseTimeout": leaseTimeout.String(), "peerCheckInterval": peerCheckInterval.String()},
		"dns":               map[string]any{"hostname": "orders.db.example.com", "ttl": 30},
	}
	if mod != nil {
		mod(spec)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": "orders", "namespace": e.ns}, "spec": spec}}
	if err := cp.Client.Create(e.t.Context(), u); err != nil {
		e.t.Fatalf("create group: %v", err)
	}
	e.group = e.get()
	for _, s := range e.sites {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orders-" + s + "-0", Namespace: e.ns,
			Labels: map[string]string{v1alpha1.LabelGroup: "orders", v1alpha1.LabelSite: s, v1alpha1.LabelRole: v1alpha1.RoleReplica}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysqld", Image: "mariadb:10.11"}}}}
		if err := cp.Client.Create(e.t.Context(), pod); err != nil {
			e.t.Fatalf("pod: %v", err)
		}
	}
}

// operatorRun is one operator process: manager, Operator and API server.
type operatorRun struct {
	op     *controller.Operator
	api    *atomic.Pointer[http.Handler]
	cancel context.CancelFunc
	done   chan struct{}
	reg    *prometheus.Registry
}

// startOperator runs an operator (as a fresh process would) until stopped or the test ends.
func (e *env) startOperator() *operatorRun {
	e.t.Helper()
	return e.startOperatorWith(nil)
}

// startOperatorWith is startOperator with mod changing the operator's
// dependencies and options first (nil: none).
func (e *env) startOperatorWith(mod func(*controller.Deps, *controller.Options)) *operatorRun {
	e.t.Helper()
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: cp.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}, Logger: testr.NewWithInterface(e.t, testr.Options{}),
		// Each test's operator sees only its own namespace: other tests' groups
		// would otherwise be resolved to this test's servers.
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}}})
	if err != nil {
		e.t.Fatalf("manager: %v", err)
	}
	router := routing.New(mgr.GetClient(), mgr.GetScheme(), routing.Options{OperatorURL: "http://127.0.0.1:1"})
	reg := prometheus.NewRegistry()
	deps := controller.Deps{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Router: router,
		Resolver: e, Recorder: mgr.GetEventRecorder("bloodraven"), Registerer: reg, Log: testr.NewWithInterface(e.t, testr.Options{}),
		SidecarURL: e.sidecarURL}
	opts := controller.Options{CallTimeout: 3 * time.Second, FenceTimeout: 300 * time.Millisecond, DrainTimeout: 2 * time.Second}
	if mod != nil {
		mod(&deps, &opts)
	}
	op, err := controller.New(deps, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := (&controller.Reconciler{Operator: op}).SetupWithManager(mgr); err != nil {
		e.t.Fatal(err)
	}
	op.Registry().SetSigner(testViewSigner)
	api := (&authority.API{Registry: op.Registry(), Elected: mgr.Elected()}).Handler()
	e.apiImpl.Store(&api)
	ctx, cancel := context.WithCancel(context.Background())
	run := &operatorRun{op: op, cancel: cancel, done: make(chan struct{}), reg: reg, api: &e.apiImpl}
	go func() {
		defer close(run.done)
		if err := mgr.Start(ctx); err != nil {
			e.t.Errorf("manager: %v", err)
		}
	}()
	e.t.Cleanup(run.stop)
	e.op = run
	return run
}

// stop ends the operator, as a crash between two passes would.
func (r *operatorRun) stop() { r.api.Store(nil); r.cancel(); <-r.done }

// get reads the group straight from the API server.
func (e *env) get() *v1alpha1.MysqlFailoverGroup {
	e.t.Helper()
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "orders"}, g); err != nil {
		e.t.Fatalf("get group: %v", err)
	}
	return g
}

// eventually polls cond every 50 ms until it holds or within passes; it
// returns how long it took.
func (e *env) eventually(within time.Duration, what string, cond func() bool) time.Duration {
	e.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			g := e.get()
			e.t.Fatalf("%s: not within %s; status: %+v", what, within, g.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// writable reads @@read_only on a site over root's socket; false when down.
func (e *env) writable(site string) bool {
	i := e.index(site)
	if !e.db.Running(i) {
		return false
	}
	db, err := sql.Open("mysql", e.db.RootDSN(i))
	if err != nil {
		return false
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var ro int
	if err := db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&ro); err != nil {
		return false
	}
	return ro == 0
}

// rootExec runs a statement as root on a site.
func (e *env) rootExec(site, stmt string) {
	e.t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(site)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(e.t.Context(), stmt); err != nil {
		e.t.Fatalf("%s on %s: %v", stmt, site, err)
	}
}

// site returns the status record of a site.
func site(g *v1alpha1.MysqlFailoverGroup, name string) v1alpha1.SiteStatus {
	for _, s := range g.Status.Sites {
		if s.Name == name {
			return s
		}
	}
	return v1alpha1.SiteStatus{}
}

// healthy waits until the group is Ready with the first site writable and
// every other site a replicating read-only.
func (e *env) healthy() {
	e.t.Helper()
	e.eventually(30*time.Second, "group healthy", func() bool {
		g := e.get()
		c := metaCondition(g, v1alpha1.ConditionReady)
		return g.Status.ActiveSite == e.sites[0] && c != nil && c.Status == metav1.ConditionTrue &&
			c.Reason == v1alpha1.ReasonHealthy
	})
}

func metaCondition(g *v1alpha1.MysqlFailoverGroup, typ string) *metav1.Condition {
	for i := range g.Status.Conditions {
		if g.Status.Conditions[i].Type == typ {
			return &g.Status.Conditions[i]
		}
	}
	return nil
}
