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

// countingGatherer answers every gather with the operator's view naming
// iad at generation 4 while up, nothing once down, and counts the gathers.
type countingGatherer struct {
	clk     *clocktesting.FakeClock
	down    bool
	gathers int
}

func (g *countingGatherer) Gather(_ context.Context, _ sidecar.Report, arrived func(string, sidecar.Reply)) (sidecar.Reply, []sidecar.PeerReply) {
	g.gathers++
	var op sidecar.Reply
	if !g.down {
		op = sidecar.ViewReply(sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders",
			ActiveSite: "iad", Generation: 4, ObservedAt: g.clk.Now(), Source: v1alpha1.SourceOperator}))
	}
	if arrived != nil {
		arrived("", op)
	}
	return op, nil
}

// TestStepperWakesAsRunDoes: a caller that owns the clock steps the Runner
// through a Stepper: the first tick is due at once, the next a
// peerCheckInterval later; a refresh request makes a tick a RefreshGap
// after the last one began; with nobody answering, the lease wake-up comes
// before the next tick and fences without a gather.
func TestStepperWakesAsRunDoes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	g := &countingGatherer{clk: clk}
	db := &fakeDB{writable: true}
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 35 * time.Second, PeerCheckInterval: 10 * time.Second, Keys: sidecar.TestKeys},
		OperatorURL: "http://operator.invalid", Logger: quietLogger(), Clock: clk, Gatherer: g}, db, t0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := r.Start(ctx)
	if w, n := db.state(); w || n != 1 {
		t.Fatalf("boot check: writable %v after %d fences, want the boot fence", w, n)
	}
	db.mu.Lock()
	db.writable = true // the operator re-asserts iad
	db.mu.Unlock()
	fire := func(want time.Time) {
		t.Helper()
		if at := st.Next(); !at.Equal(want) {
			t.Fatalf("next wake-up at %s, want %s", at.Sub(t0), want.Sub(t0))
		}
		clk.SetTime(want)
		st.Fire(ctx)
	}
	fire(t0)
	if g.gathers != 1 {
		t.Fatalf("%d gathers after the first tick, want 1", g.gathers)
	}
	fire(t0.Add(10 * time.Second))
	r.Refresh()
	fire(t0.Add(10*time.Second + 250*time.Millisecond)) // RefreshGap: a tenth of the period, at most 250 ms
	if g.gathers != 3 {
		t.Fatalf("%d gathers after the refresh tick, want 3", g.gathers)
	}
	g.down = true
	fire(t0.Add(20 * time.Second))
	fire(t0.Add(30 * time.Second))
	fire(t0.Add(40 * time.Second))
	if w, _ := db.state(); !w {
		t.Fatal("fenced with the lease (renewed at 10.25 s) running until 45.25 s")
	}
	before := g.gathers
	fire(t0.Add(45*time.Second + 250*time.Millisecond)) // the lease wake-up, before the tick at 50 s
	if w, _ := db.state(); w || g.gathers != before {
		t.Fatalf("at the lease's end: writable %v, %d gathers (want fenced, no gather)", w, g.gathers-before)
	}
}
