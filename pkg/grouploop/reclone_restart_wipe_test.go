package grouploop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestRecloneJudgesAgainBeforeTheFirstClone: Cloning was persisted (the
// judgement passed then), but before its sidecar is first asked, c
// received 0-1:11 that b lacks: the first ask waits until b holds it,
// and recovery.cloneStarted is persisted before that ask. A restarted
// operator with the marker asks at once, never judging a site whose data
// may be gone; one without it judges first.
func TestRecloneJudgesAgainBeforeTheFirstClone(t *testing.T) {
	cases := []struct {
		name       string
		started    bool
		wantAsked  bool
		wantWaitIn string
	}{
		{"not started: judged again, waits for b", false, false, "0-1:11"},
		{"started before a restart: asked at once", true, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := runningWorld(t, v1alpha1.RecoveryCloning)
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				rec := failover.SiteRecord(st, "c")
				rec.DivergentGtid, rec.Recovery.DivergentGtid, rec.Recovery.CloneStarted = "", "", c.started
			})
			w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-11"), ServerID: "0-1"}
			w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-11")}
			for range 3 {
				w.pass()
			}
			r := w.recovery()
			if asked := w.rec.asked[v1alpha1.RecoveryCloning] > 0; asked != c.wantAsked || r.CloneStarted != c.started {
				t.Fatalf("asked %v, recovery %+v", w.rec.asked, r)
			}
			if c.started {
				return
			}
			if !strings.Contains(r.Message, c.wantWaitIn) {
				t.Fatalf("message %q, want a wait for %s", r.Message, c.wantWaitIn)
			}
			b := w.views["b"]
			b.Executed = mustSet(t, "0-1:1-11")
			w.views["b"] = b
			w.l = w.loop() // a restart before the marker: judged again, not skipped
			w.pass()
			if w.rec.asked[v1alpha1.RecoveryCloning] != 0 {
				t.Fatal("asked on the restarted operator's first pass, before its own stop and observation")
			}
			w.pass()
			if r := w.recovery(); !r.CloneStarted || w.rec.asked[v1alpha1.RecoveryCloning] != 1 {
				t.Fatalf("once b holds it all: asked %v, recovery %+v", w.rec.asked, r)
			}
		})
	}
}

// TestRecloneOfASidecarWithoutTheEndpoint: c's sidecar answers that it has
// no reclone endpoint (an older version): the reclone fails in Requested
// with RecloneUnavailable, nothing asked of any later phase, c not held.
func TestRecloneOfASidecarWithoutTheEndpoint(t *testing.T) {
	w := newRecloneWorld(t)
	w.rec.err = fmt.Errorf("404: %w", ErrRecloneUnsupported)
	w.annotate("c:" + cDivergent)
	for range 3 {
		w.pass()
	}
	r := w.recovery()
	if r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneUnavailable || r.FailedPhase != v1alpha1.RecoveryRequested {
		t.Fatalf("recovery %+v", r)
	}
	if w.rec.asked[v1alpha1.RecoveryPreservingData]+w.rec.asked[v1alpha1.RecoveryCloning] != 0 || r.Holds() {
		t.Fatalf("asked %v, holds %v", w.rec.asked, r.Holds())
	}
}
