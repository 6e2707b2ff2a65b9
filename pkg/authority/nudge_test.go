package authority

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// fakeSidecars are the sidecars of sites a and b: each counts the refresh
// requests it got and answers with its status after its delay.
type fakeSidecars struct {
	mu     sync.Mutex
	got    map[string]int
	bad    []string // requests that were not an empty POST /peer/refresh
	status map[string]int
	delay  map[string]time.Duration
	srv    map[string]*httptest.Server
}

func newFakeSidecars(t *testing.T, status map[string]int, delay map[string]time.Duration) *fakeSidecars {
	t.Helper()
	f := &fakeSidecars{got: map[string]int{}, status: status, delay: delay, srv: map[string]*httptest.Server{}}
	for _, site := range []string{"a", "b"} {
		f.srv[site] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			f.got[site]++
			if r.Method != http.MethodPost || r.URL.Path != v1alpha1.PathPeerRefresh || r.ContentLength > 0 {
				f.bad = append(f.bad, r.Method+" "+r.URL.String())
			}
			code := f.status[site]
			f.mu.Unlock()
			time.Sleep(f.delay[site])
			if code == 0 {
				code = http.StatusAccepted
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(f.srv[site].Close)
	}
	return f
}

func (f *fakeSidecars) url(ns, group, site string) string {
	if ns != "shop" || group != "orders" || f.srv[site] == nil {
		return ""
	}
	return f.srv[site].URL
}

func (f *fakeSidecars) counts() (map[string]int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.got {
		out[k] = v
	}
	return out, append([]string(nil), f.bad...)
}

func TestNudgeOnPublish(t *testing.T) {
	type publish struct {
		active string
		gen    int64
	}
	for _, tc := range []struct {
		name     string
		status   map[string]int
		delay    map[string]time.Duration
		timeout  time.Duration
		publish  []publish
		want     map[string]int // refresh requests each sidecar got
		accepted float64
		unsupp   float64
		failed   float64
	}{
		{name: "first publication nudges every site", publish: []publish{{"a", 3}},
			want: map[string]int{"a": 1, "b": 1}, accepted: 2},
		{name: "the same view again nudges nobody", publish: []publish{{"a", 3}, {"a", 3}, {"a", 3}},
			want: map[string]int{"a": 1, "b": 1}, accepted: 2},
		{name: "a new generation nudges every site again", publish: []publish{{"a", 3}, {"b", 4}},
			want: map[string]int{"a": 2, "b": 2}, accepted: 4},
		{name: "a new active site at the same generation nudges", publish: []publish{{"", 0}, {"a", 1}, {"b", 1}},
			want: map[string]int{"a": 2, "b": 2}, accepted: 4},
		{name: "sidecars without the endpoint are counted, not failed", publish: []publish{{"a", 3}},
			status: map[string]int{"a": http.StatusNotFound, "b": http.StatusMethodNotAllowed},
			want:   map[string]int{"a": 1, "b": 1}, unsupp: 2},
		{name: "an error answer is a failed nudge", publish: []publish{{"a", 3}},
			status: map[string]int{"a": http.StatusInternalServerError},
			want:   map[string]int{"a": 1, "b": 1}, accepted: 1, failed: 1},
		{name: "a hung sidecar times out without holding up the other", publish: []publish{{"a", 3}},
			delay: map[string]time.Duration{"a": time.Second}, timeout: 200 * time.Millisecond,
			want: map[string]int{"a": 1, "b": 1}, accepted: 1, failed: 1},
		{name: "changes while a nudge is in flight are sent once after it",
			publish: []publish{{"a", 3}, {"b", 4}, {"a", 5}, {"b", 6}},
			delay:   map[string]time.Duration{"a": 100 * time.Millisecond, "b": 100 * time.Millisecond},
			want:    map[string]int{"a": 2, "b": 2}, accepted: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side := newFakeSidecars(t, tc.status, tc.delay)
			reg := NewRegistry(time.Now)
			prom := prometheus.NewRegistry()
			n := NewNudger(side.url, tc.timeout, prom, logr.Discard())
			reg.NotifyOnPublish(n.Published)
			for _, p := range tc.publish {
				start := time.Now()
				reg.Publish(testGroup("orders", p.active, p.gen))
				if took := time.Since(start); took > 50*time.Millisecond {
					t.Fatalf("Publish took %s: it must not wait for nudges", took)
				}
			}
			reg.Publish(testGroup("other", "a", 9)) // a group with no sidecar known: skipped
			total := func() float64 {
				return testutil.ToFloat64(n.results.WithLabelValues(NudgeAccepted)) +
					testutil.ToFloat64(n.results.WithLabelValues(NudgeUnsupported)) +
					testutil.ToFloat64(n.results.WithLabelValues(NudgeFailed))
			}
			want := tc.accepted + tc.unsupp + tc.failed
			deadline := time.Now().Add(5 * time.Second)
			for total() < want && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(250 * time.Millisecond) // and nothing more comes
			got, bad := side.counts()
			if len(bad) > 0 {
				t.Fatalf("requests other than an empty POST %s: %v", v1alpha1.PathPeerRefresh, bad)
			}
			for _, site := range []string{"a", "b"} {
				if got[site] != tc.want[site] {
					t.Errorf("sidecar %s got %d nudges, want %d", site, got[site], tc.want[site])
				}
			}
			for result, w := range map[string]float64{NudgeAccepted: tc.accepted, NudgeUnsupported: tc.unsupp, NudgeFailed: tc.failed} {
				if g := testutil.ToFloat64(n.results.WithLabelValues(result)); g != w {
					t.Errorf("%s{result=%q} = %v, want %v", MetricNudges, result, g, w)
				}
			}
		})
	}
}
