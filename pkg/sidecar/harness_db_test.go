//go:build db

package sidecar_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	gomysql "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func init() {
	// The driver logs every connection a fence kills; the tests expect them.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
}

const (
	testNamespace = "shop"
	testGroup     = "orders"
	// Short timings where the rule allows, so the tier stays quick.
	fastLease = 1500 * time.Millisecond
	fastTick  = 300 * time.Millisecond
	// slack absorbs a loaded two-core machine in every real-time bound.
	slack = time.Second
)

// operator stands in for the operator's GET /active-site and records what
// every sidecar reports.
type operator struct {
	srv     *httptest.Server
	mu      sync.Mutex
	view    v1alpha1.ActiveSiteView
	reports map[string]url.Values // last query, by site
}

func newOperator(t *testing.T, active string) *operator {
	o := &operator{reports: map[string]url.Values{}}
	o.set(active, 1)
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *operator) set(active string, gen int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.view = v1alpha1.ActiveSiteView{Namespace: testNamespace, Group: testGroup, ActiveSite: active, Generation: gen}
}

func (o *operator) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.URL.Path != v1alpha1.PathActiveSite || q.Get(v1alpha1.QueryGroup) != testGroup ||
		q.Get(v1alpha1.QueryNamespace) != testNamespace {
		http.NotFound(w, r)
		return
	}
	o.mu.Lock()
	o.reports[q.Get(v1alpha1.QuerySite)] = q
	v := o.view
	o.mu.Unlock()
	v.ObservedAt = time.Now()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sidecar.Sign(v))
}

func (o *operator) report(site string) url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.reports[site]
}

// toxi is one embedded Toxiproxy server for a test's links.
type toxi struct{ srv *toxiproxy.ApiServer }

func newToxi() *toxi {
	return &toxi{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
}

// link is a Toxiproxy link from one sidecar to an HTTP server.
type link struct {
	t *testing.T
	p *toxiproxy.Proxy
}

// link opens a proxy to the server at rawURL.
func (x *toxi) link(t *testing.T, name, rawURL string) *link {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := toxiproxy.NewProxy(x.srv, name, "127.0.0.1:0", u.Host)
	if err := x.srv.Collection.Add(p, true); err != nil {
		t.Fatalf("proxy %s: %v", name, err)
	}
	t.Cleanup(p.Stop)
	return &link{t: t, p: p}
}

func (l *link) URL() string { return "http://" + l.p.Listen }

// blackhole swallows everything both ways without closing connections.
func (l *link) blackhole() {
	for _, stream := range []string{"upstream", "downstream"} {
		js := `{"name":"bh-` + stream + `","type":"timeout","stream":"` + stream + `","attributes":{"timeout":0}}`
		if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			l.t.Fatal(err)
		}
	}
}

// heal removes the blackhole.
func (l *link) heal() {
	for _, stream := range []string{"upstream", "downstream"} {
		if err := l.p.Toxics.RemoveToxic(context.Background(), "bh-"+stream); err != nil {
			l.t.Fatal(err)
		}
	}
}

// stop refuses new connections and closes open ones; start reopens on the same address.
func (l *link) stop() { l.p.Stop() }

func (l *link) start() {
	if err := l.p.Start(); err != nil {
		l.t.Fatalf("restart proxy %s: %v", l.p.Name, err)
	}
}

// countingDB is the sidecar's MySQL, counting fences.
type countingDB struct {
	mysql.Instance
	fences atomic.Int32
}

func (c *countingDB) Fence(ctx context.Context) error {
	c.fences.Add(1)
	return c.Instance.Fence(ctx)
}

// keeper is what pkg/mysql's instance offers a termination beyond Instance.
type keeper interface {
	FenceKeepSessions(ctx context.Context) error
	AppSessions(ctx context.Context) (int, error)
}

// FenceKeepSessions and AppSessions pass the termination's verbs through
// (terminate.go finds them by interface).
func (c *countingDB) FenceKeepSessions(ctx context.Context) error {
	c.fences.Add(1)
	return c.Instance.(keeper).FenceKeepSessions(ctx)
}

func (c *countingDB) AppSessions(ctx context.Context) (int, error) {
	return c.Instance.(keeper).AppSessions(ctx)
}

func (c *countingDB) ShutdownAfterReplicas(ctx context.Context) error {
	return c.Instance.(interface {
		ShutdownAfterReplicas(ctx context.Context) error
	}).ShutdownAfterReplicas(ctx)
}

// site is one MariaDB instance with its sidecar.
type site struct {
	name   string
	idx    int
	c      *testbed.MariaDBCluster
	srv    *httptest.Server // the sidecar's HTTP server, started by run
	db     *countingDB
	runner *sidecar.Runner
	op     *link // this sidecar's link to the operator
	peers  map[string]*link
	// fencesAtReassert counts the sidecar's fences (the boot fence) when the
	// operator re-asserted the site.
	fencesAtReassert int32
	// halt stops the Runner for good, as a paused process: it acts no more.
	halt func()
}

func newSite(t *testing.T, c *testbed.MariaDBCluster, idx int, name string) *site {
	t.Helper()
	a := c.Accounts
	in, err := mysql.Open(mysql.Config{Socket: c.Socket(idx), User: "root",
		SystemUsers: []string{a.Operator.User, a.Replication.User, a.Monitor.User}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	s := &site{name: name, idx: idx, c: c, db: &countingDB{Instance: in}, peers: map[string]*link{},
		srv: httptest.NewUnstartedServer(nil)}
	t.Cleanup(s.srv.Close)
	return s
}

// timing is a sidecar's leaseTimeout and peerCheckInterval.
type timing struct{ lease, tick time.Duration }

var fast = timing{lease: fastLease, tick: fastTick}

// config links s to the operator through Toxiproxy and returns its Config,
// without peers.
func (s *site) config(t *testing.T, x *toxi, op *operator, tm timing) sidecar.Config {
	t.Helper()
	s.op = x.link(t, s.name+"-operator", op.srv.URL)
	return sidecar.Config{Settings: sidecar.Settings{Namespace: testNamespace, Group: testGroup, Site: s.name,
		LeaseTimeout: tm.lease, PeerCheckInterval: tm.tick, Keys: sidecar.TestKeys}, OperatorURL: s.op.URL(),
		Logger: slog.New(slog.NewTextHandler(testWriter{t, s.name}, nil))}
}

// run links s to the operator and to each peer through Toxiproxy, and starts
// its Runner and HTTP server until the test ends.
func (s *site) run(t *testing.T, x *toxi, op *operator, tm timing, peers ...*site) {
	t.Helper()
	s.runWith(t, s.withPeers(t, x, s.config(t, x, op, tm), peers...))
}

// withPeers adds each peer to cfg through a Toxiproxy link.
func (s *site) withPeers(t *testing.T, x *toxi, cfg sidecar.Config, peers ...*site) sidecar.Config {
	t.Helper()
	for _, p := range peers {
		l := x.link(t, s.name+"-"+p.name, "http://"+p.srv.Listener.Addr().String())
		s.peers[p.name] = l
		cfg.Peers = append(cfg.Peers, sidecar.Peer{Name: p.name, URL: l.URL()})
	}
	return cfg
}

func (s *site) runWith(t *testing.T, cfg sidecar.Config) {
	t.Helper()
	r, err := sidecar.NewRunner(cfg, s.db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.runner = r
	s.srv.Config.Handler = r.Handler()
	s.srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	s.halt = func() { cancel(); <-done }
	t.Cleanup(s.halt)
}

// testWriter sends a sidecar's log lines to t.Log, prefixed with its site.
type testWriter struct {
	t    *testing.T
	site string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(w.site + ": " + strings.TrimSpace(string(p)))
	return len(p), nil
}

// reassert plays the operator's primary re-assert: once s's sidecar has heard
// the operator (so its boot safety net is lifted), make s writable.
func (s *site) reassert(t *testing.T) {
	t.Helper()
	eventually(t, 10*time.Second, "sidecar "+s.name+" hears the operator", func() bool {
		return !s.runner.Status().AwaitingOperator
	})
	s.fencesAtReassert = s.db.fences.Load()
	if err := s.db.Unfence(ctxFor(t, 5*time.Second)); err != nil {
		t.Fatalf("unfence %s: %v", s.name, err)
	}
}

// writable reads whether s's mysqld accepts application writes.
func (s *site) writable(t *testing.T) bool {
	t.Helper()
	st, err := s.db.Status(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatalf("status of %s: %v", s.name, err)
	}
	return st.Writable()
}

func (s *site) appDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", s.c.AppDSN(s.idx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// metric reads the sample of s's /metrics with every given label, e.g.
// metric(t, name, `reason="view"`).
func (s *site) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(s.srv.URL + sidecar.PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		key, val, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(key, name+"{") || !containsAll(key, labels) {
			continue
		}
		var f float64
		if err := json.Unmarshal([]byte(val), &f); err == nil {
			return f
		}
	}
	t.Fatalf("metric %s{%s} not found in:\n%s", name, labels, body)
	return 0
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(ctxFor(t, 5*time.Second), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
