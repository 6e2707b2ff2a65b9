package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestRestartedSidecarRelaysNothingBeforeTheOperator is issue 13's path 1 at
// the runner: fra's sidecar restarted in place, reaches iad (the old
// primary) but not the operator. It learns iad's old view from iad, and
// must not serve it back, or iad's lease renews forever.
func TestRestartedSidecarRelaysNothingBeforeTheOperator(t *testing.T) {
	old := sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad", Generation: 4,
		ObservedAt: time.Now()})
	iad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(old)
	}))
	defer iad.Close()
	opSrv := httptest.NewServer(http.NotFoundHandler())
	opSrv.Close() // the operator is unreachable from fra
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "fra",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: opSrv.URL,
		Peers: []sidecar.Peer{{Name: "iad", URL: iad.URL}}, Logger: quietLogger()}, &fakeDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.Tick(context.Background())
	if code, body := get(t, r.Handler(), v1alpha1.PathPeerActiveSite); code != http.StatusServiceUnavailable {
		t.Fatalf("/peer/active-site before hearing the operator = %d %s, want 503", code, body)
	}
}

// TestRestartedSidecarKeepsItsFloor: the generation floor a process wrote
// in its state directory holds for the next process in the same Pod, which
// never adopts an older view, even a genuinely signed one.
func TestRestartedSidecarKeepsItsFloor(t *testing.T) {
	op := &signingOperator{}
	op.signer.Store(sidecar.TestSigner)
	opSrv := httptest.NewServer(op)
	dir := t.TempDir()
	cfg := sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "fra",
		LeaseTimeout: time.Second, PeerCheckInterval: 100 * time.Millisecond, Keys: sidecar.TestKeys},
		OperatorURL: opSrv.URL, StateDir: dir, Logger: quietLogger()}
	first, err := sidecar.NewRunner(cfg, &fakeDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	first.Tick(context.Background()) // holds generation 4
	opSrv.Close()                    // then loses the operator, and restarts
	old := sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad", Generation: 3,
		ObservedAt: time.Now()})
	iad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(old)
	}))
	defer iad.Close()
	cfg.Peers = []sidecar.Peer{{Name: "iad", URL: iad.URL}}
	second, err := sidecar.NewRunner(cfg, &fakeDB{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	second.Tick(context.Background())
	if st := second.Status(); st.View != nil {
		t.Fatalf("the restarted sidecar adopted %+v below its floor", st.View)
	}
	if n := rejected(t, second); n != 1 {
		t.Fatalf("rejected %v views, want 1", n)
	}
}

// TestReportsEchoTheOperatorsLastView is issue 13's path 7 at the sidecar:
// each report carries the boot id and echoes the operator id and Seq (and,
// for operators before Seq, observedAt) of the last view received from the
// operator before that tick's mysqld read, never one of the same tick.
func TestReportsEchoTheOperatorsLastView(t *testing.T) {
	var (
		mu      sync.Mutex
		queries []url.Values
		served  []time.Time
	)
	opSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		queries, served = append(queries, r.URL.Query()), append(served, now)
		seq := int64(len(served)) * 10
		mu.Unlock()
		v := sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders",
			ActiveSite: "iad", Generation: 4, ObservedAt: now, Operator: "op-7"})
		v.Seq = seq // served alongside, unsigned
		_ = json.NewEncoder(w).Encode(v)
	}))
	defer opSrv.Close()
	r := newTestRunner(t, &fakeDB{}, opSrv.URL)
	for range 3 {
		r.Tick(context.Background())
	}
	mu.Lock()
	defer mu.Unlock()
	boot := queries[0].Get(v1alpha1.QueryBoot)
	if boot == "" || queries[0].Has(v1alpha1.QueryViewOperator) || queries[0].Has(v1alpha1.QueryViewObservedAt) ||
		queries[0].Has(v1alpha1.QueryViewSeq) {
		t.Fatalf("first report %v: want a boot id and no echo", queries[0])
	}
	for i := 1; i < 3; i++ {
		q := queries[i]
		at, err := time.Parse(time.RFC3339Nano, q.Get(v1alpha1.QueryViewObservedAt))
		if err != nil || q.Get(v1alpha1.QueryViewOperator) != "op-7" || !at.Equal(served[i-1]) || q.Get(v1alpha1.QueryBoot) != boot ||
			q.Get(v1alpha1.QueryViewSeq) != strconv.Itoa(i*10) {
			t.Fatalf("report %d %v: want op-7 and the view served at %s (%v)", i, q, served[i-1].Format(time.RFC3339Nano), err)
		}
	}
}
