package grouploop

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// The reclone phase machine over time: restarts, failovers, failures, and
// the wait for a second copy before a site's data is replaced
// (reclone_test.go has the world these run in).

// TestRecloneResumesAfterARestart: the operator stops right after each
// phase is persisted; a new process reads status, resumes at that phase,
// never re-runs the phases before it, and finishes.
func TestRecloneResumesAfterARestart(t *testing.T) {
	for _, stop := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData,
		v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp} {
		t.Run(string(stop), func(t *testing.T) {
			w := newRecloneWorld(t)
			w.rec.onDone = func(phase v1alpha1.RecoveryPhase) {
				if phase == v1alpha1.RecoveryCloning {
					w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly,
						Executed: mustSet(t, "0-1:1-10"), Replication: topology.Replication{Running: true}}
				}
			}
			w.annotate("c:0-3:1-3")
			for i := 0; w.recovery().Phase != stop; i++ {
				if i > 20 {
					t.Fatalf("never reached %s: %v", stop, w.phases)
				}
				w.pass()
			}
			before := map[v1alpha1.RecoveryPhase]int{}
			for k, v := range w.rec.asked {
				before[k] = v
			}
			w.l = w.loop() // the operator restarts: only the API server's copy is left
			for range 10 {
				w.pass()
			}
			if got := w.recovery().Phase; got != v1alpha1.RecoveryRejoined {
				t.Fatalf("after the restart: %s, phases %v", got, w.phases)
			}
			for _, ph := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryPreservingData, v1alpha1.RecoveryCloning} {
				if slices.Index(recloneOrder, ph) < slices.Index(recloneOrder, stop) && w.rec.asked[ph] != before[ph] {
					t.Errorf("%s ran again after the restart at %s", ph, stop)
				}
			}
			if len(w.rec.request) != 1 {
				t.Fatalf("the restart changed the reclone's identity: %v", w.rec.request)
			}
			w.assertNeverWriter()
		})
	}
}

var recloneOrder = []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData,
	v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp, v1alpha1.RecoveryRejoined}

// runningWorld is a world whose reclone of c persisted phase.
func runningWorld(t *testing.T, phase v1alpha1.RecoveryPhase) *recloneWorld {
	w := newRecloneWorld(t)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		failover.SiteRecord(st, "c").Recovery = &v1alpha1.SiteRecovery{Phase: phase, Donor: "b", Request: "c:0-3:1-3",
			DivergentGtid: cDivergent, StartTime: ptrTime(t0), CatchUpGtid: "0-1:1-10",
			CloneStarted: phase == v1alpha1.RecoveryCloning || phase == v1alpha1.RecoveryCatchingUp}
	})
	return w
}

// TestRecloneStopsWhenItsSiteIsActive: however c came to be the active
// site or a failover's target (an edit, a bug elsewhere), no more of the
// reclone's work runs on it: the reclone fails with ActiveSite.
func TestRecloneStopsWhenItsSiteIsActive(t *testing.T) {
	cases := []struct {
		name string
		edit func(st *v1alpha1.MysqlFailoverGroupStatus)
	}{
		{"status names c active", func(st *v1alpha1.MysqlFailoverGroupStatus) { st.ActiveSite = "c" }},
		{"an emergency failover targets c", func(st *v1alpha1.MysqlFailoverGroupStatus) {
			st.ActiveSite, st.TopologyGeneration = "c", 5
			st.Failover = &v1alpha1.FailoverIntent{From: "a", To: "c", Generation: 5, Step: v1alpha1.StepFencing}
		}},
		{"a planned failover targets c", func(st *v1alpha1.MysqlFailoverGroupStatus) {
			st.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Target: "c", Phase: v1alpha1.PhaseDraining}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := runningWorld(t, v1alpha1.RecoveryPreservingData)
			w.edit(c.edit)
			w.pass()
			r := w.recovery()
			if r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneActiveSite {
				t.Fatalf("recovery %+v", r)
			}
			if len(w.rec.asked) != 0 {
				t.Fatalf("work asked of c: %v", w.rec.asked)
			}
			if evs := strings.Join(w.events(), "\n"); !strings.Contains(evs, "Warning RecloneFailed") {
				t.Fatalf("events %q", evs)
			}
		})
	}
}

// TestRecloneWaitsWhileAFailoverRuns: a failover between other sites
// pauses the reclone where it is; it goes on once the failover is over.
func TestRecloneWaitsWhileAFailoverRuns(t *testing.T) {
	w := runningWorld(t, v1alpha1.RecoveryCloning)
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
		st.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Target: "b", Phase: v1alpha1.PhaseDraining}
	})
	for range 3 {
		w.pass()
	}
	if len(w.rec.asked) != 0 || w.recovery().Phase != v1alpha1.RecoveryCloning {
		t.Fatalf("moved during a planned failover: %v %+v", w.rec.asked, w.recovery())
	}
	w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) { st.PlannedFailover.Phase = v1alpha1.PhaseSucceeded })
	for range 3 {
		w.pass()
	}
	if w.recovery().Phase != v1alpha1.RecoveryCatchingUp {
		t.Fatalf("did not go on after the failover: %+v", w.recovery())
	}
}

// TestReclonePhaseFailures: a phase the site reports failed ends the
// reclone with its reason; a sidecar that does not answer is asked again.
func TestReclonePhaseFailures(t *testing.T) {
	cases := []struct {
		phase  v1alpha1.RecoveryPhase
		reason string
		held   bool
	}{
		{v1alpha1.RecoveryPreservingData, v1alpha1.ReasonPreserveFailed, false},
		{v1alpha1.RecoveryCloning, v1alpha1.ReasonCloneFailed, true},
	}
	for _, c := range cases {
		t.Run(string(c.phase), func(t *testing.T) {
			w := runningWorld(t, c.phase)
			w.rec.err = errors.New("connection refused")
			for range 3 {
				w.pass()
			}
			if w.recovery().Phase != c.phase || w.rec.asked[c.phase] != 3 {
				t.Fatalf("unanswered: %+v, asked %v", w.recovery(), w.rec.asked)
			}
			w.rec.err, w.rec.fail[c.phase] = nil, "the donor's stream ended early"
			w.pass()
			r := w.recovery()
			if r.Phase != v1alpha1.RecoveryFailed || r.Reason != c.reason || !strings.Contains(r.Message, "ended early") {
				t.Fatalf("recovery %+v", r)
			}
			w.pass()
			if w.rec.asked[c.phase] != 4 {
				t.Fatalf("a failed reclone was asked again: %v", w.rec.asked)
			}
			// Failed before its data was touched, c is judged like any site
			// again; failed in Cloning, its data may be half replaced: it is
			// held until a new reclone of it is accepted.
			g := readGroup(t, w.cl)
			if held := w.input(g).Sites[2].AdminFenced; held != c.held {
				t.Fatalf("c held %v after the reclone failed in %s, want %v", held, c.phase, c.held)
			}
			if r.FailedPhase != c.phase {
				t.Fatalf("failedPhase %q", r.FailedPhase)
			}
			if c.held {
				w.annotate("c:0-3:1-3")
				w.pass()
				if got := w.recovery(); got.Phase != v1alpha1.RecoveryRequested || !got.Holds() {
					t.Fatalf("a new reclone of the held site: %+v", got)
				}
			}
		})
	}
}

// TestRecloneWaitsForAnotherCopy: c holds a commit (acknowledged, say)
// that b, the other candidate, lacks. c's replication is stopped and its
// data is not replaced until b holds it; a c that cannot be stopped and
// may acknowledge is waited for too.
func TestRecloneWaitsForAnotherCopy(t *testing.T) {
	t.Run("b lags", func(t *testing.T) {
		w := newRecloneWorld(t)
		w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) { failover.SiteRecord(st, "c").DivergentGtid = "" })
		w.views["a"] = topology.SiteView{Name: "a", State: v1alpha1.StateWritable, Executed: mustSet(t, "0-1:1-11"), ServerID: "0-1"}
		w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-11"),
			Replication: topology.Replication{Running: true}}
		w.annotate("c:confirm=orders")
		// Requested, PreservingData (two asks), then a stop seen running
		// and one seen stopped before c is judged.
		for range 8 {
			w.pass()
		}
		if got := w.recovery(); got.Phase != v1alpha1.RecoveryPreservingData || !strings.Contains(got.Message, "0-1:11") {
			t.Fatalf("recovery %+v, want a wait for 0-1:11", got)
		}
		if w.stops == 0 || w.views["c"].Replication.Running {
			t.Fatal("c's replication not stopped")
		}
		if w.rec.asked[v1alpha1.RecoveryCloning] != 0 {
			t.Fatal("cloning asked while c holds the only copy of 0-1:11")
		}
		b := w.views["b"]
		b.Executed = mustSet(t, "0-1:1-11")
		w.views["b"] = b
		w.pass()
		if got := w.recovery(); got.Phase != v1alpha1.RecoveryCloning {
			t.Fatalf("recovery %+v once b holds it all", got)
		}
	})
	t.Run("c may acknowledge and does not answer", func(t *testing.T) {
		w := runningWorld(t, v1alpha1.RecoveryPreservingData)
		w.rec.after = 1
		w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateUnreachable, MayAcknowledge: true,
			FenceConfirmed: true, Stale: true, Executed: mustSet(t, "0-1:1-8,0-3:1-3")}
		for range 4 {
			w.pass()
		}
		if got := w.recovery(); got.Phase != v1alpha1.RecoveryPreservingData || !strings.Contains(got.Message, "acknowledge") {
			t.Fatalf("recovery %+v", got)
		}
		c := w.views["c"]
		c.MayAcknowledge = false
		w.views["c"] = c
		w.pass()
		if got := w.recovery(); got.Phase != v1alpha1.RecoveryCloning {
			t.Fatalf("a c down that acknowledges nothing: %+v", got)
		}
	})
}

// TestRecloneRequestLeftAfterItsRejoin: a process that did not see the
// accepted request's removal fail (a restarted operator) cannot tell the
// leftover from a new request with the same value: after a rejoin it is a
// new request, run again (TestRecloneLeftoverThisProcessFailedToRemove for
// the process that saw it fail). The same value after a failed reclone is
// a retry.
func TestRecloneRequestLeftAfterItsRejoin(t *testing.T) {
	for _, c := range []struct {
		phase v1alpha1.RecoveryPhase
		again bool
	}{{v1alpha1.RecoveryRejoined, true}, {v1alpha1.RecoveryFailed, true}} {
		t.Run(string(c.phase), func(t *testing.T) {
			w := runningWorld(t, c.phase)
			w.edit(func(st *v1alpha1.MysqlFailoverGroupStatus) {
				r := failover.SiteRecord(st, "c").Recovery
				r.Request = "c:confirm=orders"
				failover.SiteRecord(st, "c").DivergentGtid = ""
			})
			w.views["c"] = topology.SiteView{Name: "c", State: v1alpha1.StateReadOnly, Executed: mustSet(t, "0-1:1-10"),
				Replication: topology.Replication{Running: true}}
			w.annotate("c:confirm=orders")
			w.pass()
			g := readGroup(t, w.cl)
			if _, ok := g.Annotations[v1alpha1.RecloneSiteAnnotation]; ok {
				t.Fatal("request not removed")
			}
			if again := w.recovery().Phase == v1alpha1.RecoveryRequested; again != c.again {
				t.Fatalf("after a reclone %s the same request ran again: %v, want %v", c.phase, again, c.again)
			}
		})
	}
}

// TestRecoveryBlockedCondition: Degraded says RecoveryBlocked while a
// diverged site, or one whose reclone failed mid-clone, waits for a
// person; not while its reclone runs, nor once it rejoined.
func TestRecoveryBlockedCondition(t *testing.T) {
	cases := []struct {
		name     string
		recovery *v1alpha1.SiteRecovery
		div      string
		blocked  bool
	}{
		{"diverged, nobody asked", nil, cDivergent, true},
		{"diverged, its reclone runs", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryCloning}, cDivergent, false},
		{"reclone failed mid-clone", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryFailed,
			FailedPhase: v1alpha1.RecoveryCloning}, "", true},
		{"reclone failed before touching data", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryFailed,
			FailedPhase: v1alpha1.RecoveryRequested}, "", false},
		{"rejoined", &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryRejoined}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 4)
			g.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", DivergentGtid: c.div, Recovery: c.recovery}}
			testLoop().recordConditions(g, topology.Decision{Kind: topology.KindHealthy, Reason: v1alpha1.ReasonHealthy})
			got := meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionDegraded)
			if blocked := got != nil && got.Status == metav1.ConditionTrue && got.Reason == v1alpha1.ReasonRecoveryBlocked; blocked != c.blocked {
				t.Fatalf("Degraded %+v, want RecoveryBlocked %v", got, c.blocked)
			}
		})
	}
}

// TestRecloneCancel: <site>:cancel stops a reclone that has not begun to
// replace the site's data, and holds nothing after; once Cloning began it
// is refused and the reclone goes on.
func TestRecloneCancel(t *testing.T) {
	for _, c := range []struct {
		phase  v1alpha1.RecoveryPhase
		cancel bool
	}{{v1alpha1.RecoveryRequested, true}, {v1alpha1.RecoveryPreservingData, true}, {v1alpha1.RecoveryCloning, false}} {
		t.Run(string(c.phase), func(t *testing.T) {
			w := runningWorld(t, c.phase)
			w.rec.err = errors.New("busy") // the phase does not move by itself
			w.annotate("c:cancel")
			w.pass()
			g := readGroup(t, w.cl)
			if _, ok := g.Annotations[v1alpha1.RecloneSiteAnnotation]; ok {
				t.Fatal("cancel request not removed")
			}
			r := w.recovery()
			if !c.cancel {
				if r.Phase != c.phase || g.Status.LastRecloneRejection == nil {
					t.Fatalf("a cancel during %s: %+v, rejection %+v", c.phase, r, g.Status.LastRecloneRejection)
				}
				return
			}
			if r.Phase != v1alpha1.RecoveryFailed || r.Reason != v1alpha1.ReasonRecloneCancelled || r.Holds() {
				t.Fatalf("cancelled in %s: %+v", c.phase, r)
			}
			if w.input(g).Sites[2].AdminFenced {
				t.Fatal("c still held after the cancel")
			}
		})
	}
}
