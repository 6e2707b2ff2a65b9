package sidecar_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// fakeDB is an in-memory mysqld: writable or not, up or down.
type fakeDB struct {
	mu       sync.Mutex
	writable bool
	down     bool
	fences   int
}

func (f *fakeDB) Status(context.Context) (mysql.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return mysql.Status{}, fmt.Errorf("status: %w", syscall.ECONNREFUSED)
	}
	return mysql.Status{ReadOnly: !f.writable}, nil
}

func (f *fakeDB) Fence(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fences++
	f.writable = false
	return nil
}

func (f *fakeDB) state() (writable bool, fences int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writable, f.fences
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeOperator answers /active-site with iad at generation 4 and keeps the last query.
type fakeOperator struct {
	mu    sync.Mutex
	query url.Values
}

func (o *fakeOperator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.query = r.URL.Query()
	o.mu.Unlock()
	_ = json.NewEncoder(w).Encode(sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad",
		Generation: 4, ObservedAt: time.Now(), Source: v1alpha1.SourceOperator}))
}

func (o *fakeOperator) last() url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.query
}

func newTestRunner(t *testing.T, db sidecar.MySQL, operatorURL string, peers ...sidecar.Peer) *sidecar.Runner {
	t.Helper()
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: operatorURL, Peers: peers,
		Logger: quietLogger()}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestRunnerEndpointsBeforeAndAfterATick(t *testing.T) {
	op := &fakeOperator{}
	opSrv := httptest.NewServer(op)
	defer opSrv.Close()
	db := &fakeDB{writable: true}
	r := newTestRunner(t, db, opSrv.URL, sidecar.Peer{Name: "pdx", URL: "http://127.0.0.1:1"})
	h := r.Handler()

	if code, _ := get(t, h, sidecar.PathHealthz); code != http.StatusOK {
		t.Fatalf("/healthz = %d", code)
	}
	if code, _ := get(t, h, sidecar.PathReadyz); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before any read = %d, want 503", code)
	}
	if code, body := get(t, h, v1alpha1.PathPeerActiveSite); code != http.StatusServiceUnavailable {
		t.Fatalf("/peer/active-site without a view = %d %s, want 503 (not 404)", code, body)
	}

	r.Tick(context.Background())
	if code, _ := get(t, h, sidecar.PathReadyz); code != http.StatusOK {
		t.Fatalf("/readyz after a read = %d", code)
	}
	code, body := get(t, h, v1alpha1.PathPeerActiveSite)
	var v v1alpha1.ActiveSiteView
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil || v.Generation != 4 || v.Source != v1alpha1.SourceOperator {
		t.Fatalf("/peer/active-site = %d %s (%v)", code, body, err)
	}
	q := op.last()
	if q.Get(v1alpha1.QuerySite) != "iad" || q.Get(v1alpha1.QueryGeneration) != "0" || q.Get(v1alpha1.QueryFenced) != "false" ||
		q.Get(v1alpha1.QueryMysqld) != "up" || q.Get(v1alpha1.QueryGroup) != "orders" || q.Get(v1alpha1.QueryNamespace) != "shop" {
		t.Fatalf("report to the operator: %v", q)
	}
	var st sidecar.StatusReport
	if code, body := get(t, h, sidecar.PathStatus); code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("/status = %d %s", code, body)
	}
	if st.MySQLD != "writable" || st.AwaitingOperator || st.LeaseRemainingSeconds <= 0 || st.Operator.LastContact == nil ||
		len(st.Peers) != 1 || st.Peers[0].LastReply != "none" || st.Peers[0].LastError == "" {
		t.Fatalf("/status = %+v", st)
	}
	_, metrics := get(t, h, sidecar.PathMetrics)
	for _, want := range []string{sidecar.MetricSelfFences, sidecar.MetricLeaseRemaining, sidecar.MetricViewGeneration + " 4",
		sidecar.MetricContactErrors + `{kind="unreachable",target="peer/pdx"} 1`, sidecar.MetricMySQLWritable + " 1"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestRunnerBootFenceThenNoUnfence(t *testing.T) {
	db := &fakeDB{writable: true}
	r := newTestRunner(t, db, "http://127.0.0.1:1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for w, n := db.state(); w || n != 1; w, n = db.state() {
		if time.Now().After(deadline) {
			t.Fatalf("boot fence: writable %v after %d fences", w, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.LastFence == nil || st.LastFence.Reason != sidecar.ReasonBoot || !st.AwaitingOperator {
		t.Fatalf("status after the boot fence: %+v", st)
	}
}

func TestNewRunnerRejectsBadConfig(t *testing.T) {
	good := sidecar.Config{Settings: sidecar.Settings{Group: "orders", Site: "iad", LeaseTimeout: time.Minute,
		PeerCheckInterval: time.Second, Keys: sidecar.TestKeys}, OperatorURL: "http://op:8080"}
	for name, mutate := range map[string]func(*sidecar.Config){
		"no operator URL":        func(c *sidecar.Config) { c.OperatorURL = "" },
		"operator URL no scheme": func(c *sidecar.Config) { c.OperatorURL = "op:8080" },
		"peer is this site":      func(c *sidecar.Config) { c.Peers = []sidecar.Peer{{Name: "iad", URL: "http://x"}} },
		"duplicate peer": func(c *sidecar.Config) {
			c.Peers = []sidecar.Peer{{Name: "pdx", URL: "http://x"}, {Name: "pdx", URL: "http://y"}}
		},
		"request timeout too long": func(c *sidecar.Config) { c.RequestTimeout = 2 * time.Second },
		"short lease":              func(c *sidecar.Config) { c.LeaseTimeout = 2 * time.Second },
		"no view keys":             func(c *sidecar.Config) { c.Keys = nil },
	} {
		c := good
		mutate(&c)
		if _, err := sidecar.NewRunner(c, &fakeDB{}, time.Now()); !errors.Is(err, sidecar.ErrInvalidSettings) {
			t.Errorf("%s: %v, want ErrInvalidSettings", name, err)
		}
	}
	if _, err := sidecar.NewRunner(good, &fakeDB{}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestRunnerReportsMySQLDown(t *testing.T) {
	op := &fakeOperator{}
	opSrv := httptest.NewServer(op)
	defer opSrv.Close()
	// Down needs the process evidence too: no mysqld by its pid file, and
	// its TCP port refusing connections.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	_ = l.Close()
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: opSrv.URL,
		Process: sidecar.Process{PIDFile: t.TempDir() + "/mysqld.pid", TCPAddr: refused}, Logger: quietLogger()},
		&fakeDB{down: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.Tick(context.Background())
	if code, body := get(t, r.Handler(), sidecar.PathReadyz); code != http.StatusServiceUnavailable || !strings.Contains(body, "down") {
		t.Fatalf("/readyz with mysqld down = %d %s", code, body)
	}
	if q := op.last(); q.Get(v1alpha1.QueryMysqld) != "down" || q.Has(v1alpha1.QueryFenced) {
		t.Fatalf("report with mysqld down: %v", q)
	}
}
