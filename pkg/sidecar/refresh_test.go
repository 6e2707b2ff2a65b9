package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

func TestRefreshEndpoint(t *testing.T) {
	r := newTestRunner(t, &fakeDB{}, "http://127.0.0.1:1")
	h := r.Handler()
	for _, tc := range []struct {
		name   string
		method string
		body   string
		want   int
	}{
		{name: "POST without a body is accepted", method: http.MethodPost, want: http.StatusAccepted},
		{name: "POST with a body is accepted and the body ignored", method: http.MethodPost,
			body: `{"activeSite":"pdx","generation":99}`, want: http.StatusAccepted},
		{name: "GET is not allowed", method: http.MethodGet, want: http.StatusMethodNotAllowed},
		{name: "PUT is not allowed", method: http.MethodPut, want: http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, v1alpha1.PathPeerRefresh, strings.NewReader(tc.body)))
			if rec.Code != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, v1alpha1.PathPeerRefresh, rec.Code, rec.Body, tc.want)
			}
		})
	}
	// A refresh request carries no view: the runner still holds none.
	if code, _ := get(t, h, v1alpha1.PathPeerActiveSite); code != http.StatusServiceUnavailable {
		t.Fatalf("/peer/active-site after refresh requests = %d, want 503", code)
	}
	_, metrics := get(t, h, sidecar.PathMetrics)
	if !strings.Contains(metrics, sidecar.MetricRefreshes+" 2") {
		t.Fatalf("/metrics does not count 2 refresh requests:\n%s", metrics)
	}
}

// countingOperator answers /active-site slowly, counting requests and the
// most that were in flight at once.
type countingOperator struct {
	delay             time.Duration
	gen               atomic.Int64
	requests          atomic.Int64
	inFlight, maxSeen atomic.Int64
}

func (o *countingOperator) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := o.inFlight.Add(1)
	defer o.inFlight.Add(-1)
	for m := o.maxSeen.Load(); n > m && !o.maxSeen.CompareAndSwap(m, n); m = o.maxSeen.Load() {
	}
	o.requests.Add(1)
	time.Sleep(o.delay)
	_ = json.NewEncoder(w).Encode(sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad",
		Generation: o.gen.Load(), ObservedAt: time.Now()}))
}

// runRefreshing runs a Runner with a 3 s period and a gap of 100 ms against
// op until the test ends, after its first tick.
func runRefreshing(t *testing.T, op *countingOperator) (*sidecar.Runner, string) {
	t.Helper()
	opSrv := httptest.NewServer(op)
	t.Cleanup(opSrv.Close)
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 10 * time.Second, PeerCheckInterval: 3 * time.Second, Keys: sidecar.TestKeys}, OperatorURL: opSrv.URL,
		RefreshGap: 100 * time.Millisecond, Logger: quietLogger()}, &fakeDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, 2*time.Second, "first tick", func() bool { return op.requests.Load() == 1 && op.inFlight.Load() == 0 })
	time.Sleep(150 * time.Millisecond) // past the gap, so a request ticks at once
	return r, srv.URL
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func postRefresh(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Post(base+v1alpha1.PathPeerRefresh, "", nil)
	if err != nil {
		t.Error(err)
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST %s = %d, want 202", v1alpha1.PathPeerRefresh, resp.StatusCode)
	}
}

func TestRunnerRefresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		// send makes the requests; then the test waits settle and checks
		// that the operator was asked between min and max more times.
		send     func(t *testing.T, url string)
		settle   time.Duration
		min, max int64
		burst    bool // sent at once: a slow send may span more gaps
	}{
		{name: "one request ticks well before the period", send: func(t *testing.T, url string) { postRefresh(t, url) },
			settle: 500 * time.Millisecond, min: 1, max: 1},
		{name: "a burst of 50 makes at most two ticks", send: func(t *testing.T, url string) {
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() { postRefresh(t, url) })
			}
			wg.Wait()
		}, settle: 500 * time.Millisecond, min: 1, max: 2, burst: true},
		{name: "a flood for one second ticks at most once per gap", send: func(t *testing.T, url string) {
			var wg sync.WaitGroup
			stop := time.Now().Add(time.Second)
			for range 4 {
				wg.Go(func() {
					for time.Now().Before(stop) {
						postRefresh(t, url)
					}
				})
			}
			wg.Wait()
		}, settle: 300 * time.Millisecond, min: 5, max: 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &countingOperator{delay: 30 * time.Millisecond}
			op.gen.Store(4)
			r, url := runRefreshing(t, op)
			before, start := op.requests.Load(), time.Now()
			tc.send(t, url)
			// A loaded machine spreads a burst over more than one gap (100 ms),
			// and each gap may make one more tick: allow those, no more.
			extra := int64(0)
			if tc.burst {
				extra = max(0, int64(time.Since(start)/(100*time.Millisecond))-1)
			}
			time.Sleep(tc.settle)
			got := op.requests.Load() - before
			if max := tc.max + extra; got < tc.min || got > max {
				t.Fatalf("operator asked %d more times in %s, want %d to %d", got, time.Since(start).Round(time.Millisecond), tc.min, max)
			}
			if m := op.maxSeen.Load(); m != 1 {
				t.Fatalf("%d ticks gathered at once, want 1", m)
			}
			_, metrics := get(t, r.Handler(), sidecar.PathMetrics)
			if ticks := counterValue(t, metrics, sidecar.MetricRefreshTicks); ticks != got {
				t.Fatalf("%s = %d, want the %d extra ticks", sidecar.MetricRefreshTicks, ticks, got)
			}
		})
	}
}

func TestRunnerRefreshAdoptsTheNewGeneration(t *testing.T) {
	op := &countingOperator{}
	op.gen.Store(4)
	r, url := runRefreshing(t, op)
	op.gen.Store(5) // the operator publishes a new generation, then nudges
	postRefresh(t, url)
	took := waitFor(t, time.Second, "generation 5 after a refresh", func() bool {
		code, body := get(t, r.Handler(), v1alpha1.PathPeerActiveSite)
		var v v1alpha1.ActiveSiteView
		return code == http.StatusOK && json.Unmarshal([]byte(body), &v) == nil && v.Generation == 5
	})
	t.Logf("held generation 5 %s after the refresh request (period 3 s)", took.Round(time.Millisecond))
}

// counterValue reads an unlabelled counter from a /metrics body.
func counterValue(t *testing.T, metrics, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s value %q: %v", name, v, err)
			}
			return int64(f)
		}
	}
	t.Fatalf("%s missing from /metrics", name)
	return 0
}
