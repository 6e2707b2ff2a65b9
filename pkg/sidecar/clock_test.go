package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// TestRunnerTicksOnItsClock: the Runner reads time only from its Clock, so
// a test (or a simulation) steps it: a lease renewed at t0 runs out when
// the clock passes t0 + leaseTimeout with nobody answering, whatever the
// wall clock did meanwhile.
func TestRunnerTicksOnItsClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	var down atomic.Bool
	op := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if down.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders",
			ActiveSite: "iad", Generation: 4, ObservedAt: clk.Now(), Source: v1alpha1.SourceOperator}))
	}))
	defer op.Close()
	db := &fakeDB{writable: true}
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 30 * time.Second, PeerCheckInterval: 10 * time.Second, Keys: sidecar.TestKeys},
		OperatorURL: op.URL, Logger: quietLogger(), Clock: clk}, db, t0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Tick(ctx)
	if w, n := db.state(); !w || n != 0 {
		t.Fatalf("after the operator's view naming iad: writable %v, %d fences", w, n)
	}
	down.Store(true)
	clk.Step(29 * time.Second)
	r.Tick(ctx)
	if w, _ := db.state(); !w {
		t.Fatal("fenced with 1 s of lease left on the Runner's clock")
	}
	clk.Step(2 * time.Second)
	r.Tick(ctx)
	if w, n := db.state(); w || n == 0 {
		t.Fatalf("lease over on the Runner's clock: writable %v, %d fences", w, n)
	}
	if st := r.Status(); st.LastFence == nil || st.LastFence.Reason != sidecar.ReasonLease {
		t.Fatalf("last fence %+v, want %s", st.LastFence, sidecar.ReasonLease)
	}
}
