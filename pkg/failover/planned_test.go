package failover

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

var happyPhases = []string{"Pending", "Validating", "Draining", "WaitingForLag", "Promoting", "Resuming", "Succeeded"}

func TestPlannedSwitchover(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	passes := 0
	for ; passes < 50; passes++ {
		out, err := w.step()
		if err != nil {
			t.Fatalf("pass %d: %v", passes, err)
		}
		if b := w.block(); b.Phase.Terminal() {
			break
		}
		if !out.Acted || out.Next != 0 {
			t.Fatalf("pass %d in %s: acted=%v next=%s waiting %q: a caught-up switchover never waits",
				passes, out.Phase, out.Acted, out.Next, out.Waiting)
		}
		w.now = w.now.Add(20 * time.Millisecond)
	}
	w.assertSwitched(t)
	if !slices.Equal(w.phases, happyPhases) {
		t.Fatalf("phases %v, want %v", w.phases, happyPhases)
	}
	// One phase per pass, the last one's included: Draining fences and
	// finds no client left in the same pass, since the first round of kills
	// needs no new observation.
	if passes != len(happyPhases)-1 {
		t.Fatalf("%d passes, want %d", passes, len(happyPhases)-1)
	}
	b := w.block()
	if b.SourcePrimary != "a" || b.Target != "b" || b.SourceGtidAtFence == "" || b.TargetGtidAtPromotion == "" ||
		b.MaxLagWait == nil || b.MaxLagWait.Duration != 10*time.Second {
		t.Fatalf("block %+v", b)
	}
	for _, ev := range []string{v1alpha1.EventPlannedFailoverStarted, v1alpha1.EventPlannedFailoverDraining,
		v1alpha1.EventPlannedFailoverLagOK, v1alpha1.EventDNSFlipped} {
		if !slices.Contains(w.events, ev) {
			t.Errorf("events %v lack %s", w.events, ev)
		}
	}
	if w.lagWaits != 1 {
		t.Errorf("lag wait observed %d times", w.lagWaits)
	}
	// Nothing more happens once it is over.
	if out, _ := w.step(); out.Acted {
		t.Fatalf("acted after the end: %+v", out)
	}
}

// The target may lag when the request comes: WaitingForLag waits for it.
func TestPlannedWaitsForLaggingTarget(t *testing.T) {
	w := newPWorld(t)
	w.lagging["b"] = true
	w.annotate("b:maxLagWait=30s")
	for range 20 {
		w.step()
		w.now = w.now.Add(100 * time.Millisecond)
	}
	if b := w.block(); b.Phase != v1alpha1.PhaseWaitingForLag || b.MaxLagWait.Duration != 30*time.Second {
		t.Fatalf("block %+v, want WaitingForLag with the request's 30s", b)
	}
	if w.sites["a"].writable || w.sites["b"].writable {
		t.Fatal("a site writes while the target catches up")
	}
	w.lagging["b"] = false
	w.run(20)
	w.assertSwitched(t)
}

func TestPlannedRejections(t *testing.T) {
	cases := []struct {
		name    string
		request string
		setup   func(w *pworld)
		reason  string
	}{
		{"unknown target", "zz", nil, v1alpha1.ReasonUnknownSite},
		{"dr-only target", "c", func(w *pworld) { w.addThird(v1alpha1.RoleDROnly) }, v1alpha1.ReasonTargetUnhealthy},
		{"read-only-role target", "c", func(w *pworld) { w.addThird(v1alpha1.RoleReadOnly) }, v1alpha1.ReasonTargetUnhealthy},
		{"target not replicating", "b", func(w *pworld) { w.sites["b"].source = "" }, v1alpha1.ReasonTargetUnhealthy},
		{"target unreachable", "b", func(w *pworld) { w.sites["b"].up = false }, v1alpha1.ReasonTargetUnhealthy},
		{"target writable", "b", func(w *pworld) { w.sites["b"].writable, w.sites["b"].source = true, "" },
			v1alpha1.ReasonTargetUnhealthy},
		{"target diverged", "b", func(w *pworld) { w.persisted.Status.Sites[1].DivergentGtid = uuidB + ":1" },
			v1alpha1.ReasonTargetUnhealthy},
		{"emergency failover in flight", "b", func(w *pworld) {
			w.persisted.Status.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b", Generation: 2, Step: v1alpha1.StepFencing}
		}, v1alpha1.ReasonConcurrentOperation},
		{"ordered update in progress", "b", func(w *pworld) {
			w.persisted.Status.Phase, w.persisted.Status.Message = v1alpha1.GroupPhaseUpdating, "updating b (2 of 2 left)"
		}, v1alpha1.ReasonConcurrentOperation},
		{"the target is being recloned", "b", func(w *pworld) {
			w.persisted.Status.Sites[1].Recovery = &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryCloning, Donor: "a"}
		}, v1alpha1.ReasonConcurrentOperation},
		{"another site is being recloned", "b", func(w *pworld) {
			w.addThird(v1alpha1.RoleReadOnly)
			SiteRecord(&w.persisted.Status, "c").Recovery = &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryPreservingData, Donor: "b"}
		}, v1alpha1.ReasonConcurrentOperation},
		{"cooldown with reject", "b", func(w *pworld) { lastFailover(w, v1alpha1.KindEmergency, 30*time.Second) },
			v1alpha1.ReasonCooldownActive},
		{"source unreachable", "b", func(w *pworld) { w.sites["a"].up = false }, v1alpha1.ReasonSourceCrashed},
		{"malformed request", "b:maxLagWait=soon", nil, v1alpha1.ReasonInvalidRequest},
		{"empty request", "", nil, v1alpha1.ReasonInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			if c.setup != nil {
				c.setup(w)
			}
			w.annotate(c.request)
			w.run(10)
			w.assertEnded(t, v1alpha1.PhaseFailed, c.reason, v1alpha1.EventPlannedFailoverRejected)
			if c.reason != v1alpha1.ReasonSourceCrashed && c.name != "target writable" {
				w.assertNoFence(t)
			}
			if w.labels != "a" || w.sites["a"].source != "" || w.persisted.Status.ActiveSite != "a" {
				t.Fatalf("source touched: labels %q", w.labels)
			}
			if !strings.Contains(w.block().Message, "no fence was applied") && c.reason != v1alpha1.ReasonInvalidRequest {
				t.Errorf("message %q", w.block().Message)
			}
			want := PlannedResultRejected + ":" + map[bool]string{true: c.request, false: ""}[c.reason != v1alpha1.ReasonUnknownSite &&
				c.reason != v1alpha1.ReasonInvalidRequest]
			if !slices.Equal(w.finished, []string{want}) {
				t.Fatalf("metrics %v, want %s", w.finished, want)
			}
		})
	}
}

// lastFailover records a failover ago before w.now.
func lastFailover(w *pworld, kind v1alpha1.FailoverKind, ago time.Duration) {
	w.persisted.Status.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(w.now.Add(-ago)), From: "b", To: "a", Kind: kind}
}

func TestPlannedCooldownRejectSaysWhen(t *testing.T) {
	w := newPWorld(t)
	lastFailover(w, v1alpha1.KindPlanned, 20*time.Second)
	w.annotate("b")
	w.run(10)
	b := w.block()
	want := w.now.Add(40 * time.Second).Truncate(time.Second)
	if b.RetryAfter == nil || !b.RetryAfter.Time.Equal(want) || !strings.Contains(b.Message, "retry after") {
		t.Fatalf("block %+v, want retryAfter %s", b, want)
	}
}

func TestPlannedAlreadyActiveIsSkipped(t *testing.T) {
	w := newPWorld(t)
	lastFailover(w, v1alpha1.KindEmergency, time.Second) // a no-op is not held back by the cooldown
	w.annotate("a")
	w.run(10)
	w.assertEnded(t, v1alpha1.PhaseSucceeded, v1alpha1.ReasonAlreadyActive, v1alpha1.EventPlannedFailoverSkipped)
	w.assertNoFence(t)
	if len(w.finished) != 0 {
		t.Fatalf("a skipped request was counted: %v", w.finished)
	}
}

func TestPlannedDeferred(t *testing.T) {
	w := newPWorld(t)
	w.persisted.Spec.PlannedFailover.OnCooldown = v1alpha1.CooldownDefer
	lastFailover(w, v1alpha1.KindEmergency, 50*time.Second)
	w.annotate("b")
	for range 5 {
		w.step()
	}
	b := w.block()
	if b.Phase != v1alpha1.PhaseDeferred || b.Reason != v1alpha1.ReasonCooldownActive || b.RetryAfter == nil {
		t.Fatalf("block %+v, want Deferred", b)
	}
	if v, ok := w.annotation(); !ok || v != "b" {
		t.Fatal("annotation dropped while deferred")
	}
	if PlannedInFlight(&w.persisted.Status) {
		t.Fatal("a deferred request holds the topology")
	}
	if out, _ := w.step(); out.Acted || out.Next <= 0 || out.Next > 10*time.Second {
		t.Fatalf("deferred pass: %+v, want no action and a wake-up at retryAfter", out)
	}
	assertNoEmergencyBlock(t, w)
	w.now = b.RetryAfter.Time
	w.run(20)
	w.assertSwitched(t)
	if !slices.Contains(w.events, v1alpha1.EventPlannedFailoverDeferred) {
		t.Fatalf("events %v", w.events)
	}
}

// assertNoEmergencyBlock: while deferred, Decide still fails over a lost primary (cooldown aside).
func assertNoEmergencyBlock(t *testing.T, w *pworld) {
	t.Helper()
	p := w.pass()
	if p.Input.PlannedInFlight || p.Decision.Reason == v1alpha1.ReasonPlannedInFlight {
		t.Fatalf("input %+v decision %s", p.Input.PlannedInFlight, p.Decision)
	}
}

func TestPlannedDeferredCancelled(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(w *pworld)
	}{
		{"annotation removed", func(w *pworld) { delete(w.persisted.Annotations, v1alpha1.PlannedFailoverAnnotation) }},
		{"annotation replaced", func(w *pworld) { w.annotate("b:maxLagWait=1m") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			w.persisted.Spec.PlannedFailover.OnCooldown = v1alpha1.CooldownDefer
			lastFailover(w, v1alpha1.KindPlanned, 10*time.Second)
			w.annotate("b")
			for range 5 {
				w.step()
			}
			c.change(w)
			for range 5 {
				w.step()
			}
			if b := w.block(); b.Request == "b" {
				w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonCancelled, v1alpha1.EventPlannedFailoverFailed)
			}
			w.assertNoFence(t)
			if v, ok := w.annotation(); c.name == "annotation replaced" {
				// The new request starts, and is deferred in its turn.
				if !ok || v != "b:maxLagWait=1m" || w.block().Request != v || w.block().Phase != v1alpha1.PhaseDeferred {
					t.Fatalf("new request: annotation %q block %+v", v, w.block())
				}
				if !slices.Contains(w.phases, string(v1alpha1.PhaseFailed)) {
					t.Fatalf("the first request was not ended: %v", w.phases)
				}
			}
		})
	}
}

func TestPlannedLagTimeoutRollsBack(t *testing.T) {
	w := newPWorld(t)
	w.lagging["b"] = true
	w.annotate("b:maxLagWait=2s")
	w.run(100)
	w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonLagTimeout, v1alpha1.EventPlannedFailoverFailed)
	w.assertNoFence(t) // a is writable again, labelled primary, DNS never moved
	if HeldReadOnly(&w.persisted.Status, "a") || w.persisted.Status.LastFailover != nil {
		t.Fatalf("status after the rollback: %+v", w.persisted.Status)
	}
	if !slices.Equal(w.finished, []string{PlannedResultFailedTimeout + ":b"}) || w.lagWaits != 1 {
		t.Fatalf("metrics %v lag waits %d", w.finished, w.lagWaits)
	}
	if took := w.block().CompletionTime.Sub(w.block().StartTime.Time); took < 2*time.Second || took > 4*time.Second {
		t.Fatalf("rolled back after %s, want about maxLagWait", took)
	}
}

func TestPlannedDrainTimeoutAdvances(t *testing.T) {
	w := newPWorld(t)
	w.kills = []int{3} // a client keeps reconnecting
	w.annotate("b")
	w.run(100)
	w.assertSwitched(t)
	if !slices.ContainsFunc(w.phases, func(string) bool { return true }) {
		t.Fatal("no phases")
	}
	if took := w.block().DurationSeconds; took < 3 {
		t.Fatalf("switchover took %ds, want drainTimeout (3s) at least", took)
	}
}

func TestPlannedSwitchoverDelayBoundsDrain(t *testing.T) {
	for _, c := range []struct {
		name        string
		delay       time.Duration // 0: unset
		least, most int64         // seconds the switchover takes
		msg         string
	}{
		{"unset: drainTimeout (3s) bounds it", 0, 3, 5, "drainTimeout 3s elapsed"},
		{"shorter than drainTimeout", time.Second, 1, 2, "switchoverDelay 1s elapsed"},
		{"longer than drainTimeout", 6 * time.Second, 6, 8, "switchoverDelay 6s elapsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			if c.delay > 0 {
				w.persisted.Spec.Instance.SwitchoverDelay = &metav1.Duration{Duration: c.delay}
			}
			w.kills = []int{3} // a client keeps reconnecting
			w.annotate("b")
			w.run(200)
			w.assertSwitched(t)
			if took := w.block().DurationSeconds; took < c.least || took > c.most {
				t.Fatalf("switchover took %ds, want %d to %d", took, c.least, c.most)
			}
			if !slices.ContainsFunc(w.messages, func(m string) bool { return strings.Contains(m, c.msg) }) {
				t.Fatalf("no message %q among %q", c.msg, w.messages)
			}
		})
	}
}

func TestPlannedSourceCrashes(t *testing.T) {
	for _, c := range []struct {
		name   string
		fenced bool // crash after the fence
	}{{"before the fence", false}, {"while draining", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			w.kills = []int{1}
			w.annotate("b")
			for range 20 {
				w.step()
				if b := w.block(); b.Phase == v1alpha1.PhaseDraining && (b.SourceGtidAtFence != "") == c.fenced {
					break
				}
			}
			w.sites["a"].up, w.sites["a"].writable = false, false
			w.run(10)
			w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonSourceCrashed, v1alpha1.EventPlannedFailoverFailed)
			if w.sites["b"].writable || w.persisted.Status.ActiveSite != "a" {
				t.Fatal("the planned path promoted b")
			}
			// Handed off: the guard is released and Decide asks for a failover to b.
			p := w.pass()
			if PlannedInFlight(&w.persisted.Status) || !p.Decision.Start || p.Decision.Target != "b" {
				t.Fatalf("decision after the hand-off: %s (%s)", p.Decision, p.Decision.Message)
			}
		})
	}
}

func TestPlannedPromotionFailure(t *testing.T) {
	w := newPWorld(t)
	w.errs["promote"] = errFake
	w.annotate("b")
	w.run(200)
	w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonExecuteFailed, v1alpha1.EventPlannedFailoverFailed)
	st := w.persisted.Status
	if w.sites["a"].writable || st.ActiveSite != "b" || st.TopologyGeneration != 2 || len(w.writers()) != 0 {
		t.Fatalf("no rollback expected: writers %v status %+v", w.writers(), st)
	}
	// The loop takes over: the active site b is read-only and nothing else writes.
	delete(w.errs, "promote")
	if d := w.pass().Decision; d.Kind != topology.KindNoPrimary || d.Target != "b" {
		t.Fatalf("decision after ExecuteFailed: %s", d)
	}
}

func TestPlannedDNSFailureStillSucceeds(t *testing.T) {
	w := newPWorld(t)
	w.errs["dns"] = errFake
	w.annotate("b")
	w.run(20)
	w.assertEnded(t, v1alpha1.PhaseSucceeded, v1alpha1.ReasonDNSFlipFailed, v1alpha1.EventPlannedFailoverCompleted)
	if !slices.Contains(w.events, v1alpha1.EventDNSFlipFailed) || w.dns != "a" || w.labels != "b" ||
		*w.block().TransactionsLost != 0 || w.persisted.Status.ActiveSite != "b" {
		t.Fatalf("events %v dns %q labels %q block %+v", w.events, w.dns, w.labels, w.block())
	}
	// Later passes retry the flip without taking the pass, until it works.
	if out, _ := w.step(); out.Acted || w.dns != "a" {
		t.Fatalf("retry while DNS still fails: %+v dns %q", out, w.dns)
	}
	delete(w.errs, "dns")
	if out, _ := w.step(); out.Acted || w.dns != "b" || w.block().Reason != "" || w.block().Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("retry: %+v dns %q block %+v", out, w.dns, w.block())
	}
}

func TestPlannedFenceFailureRollsBack(t *testing.T) {
	w := newPWorld(t)
	w.errs["fence"] = errFake
	w.annotate("b")
	w.run(100)
	w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonSourceFenceFailed, v1alpha1.EventPlannedFailoverFailed)
	w.assertNoFence(t)
}

func TestPlannedHoldsTheTopology(t *testing.T) {
	w := newPWorld(t)
	w.lagging["b"] = true
	w.annotate("b")
	w.run(6)
	if w.block().Phase != v1alpha1.PhaseWaitingForLag {
		t.Fatalf("phase %s", w.block().Phase)
	}
	w.sites["a"].up = false // lost while fenced: Decide must not act on it
	if d := w.pass().Decision; d.Kind != topology.KindFailoverBlocked || d.Reason != v1alpha1.ReasonPlannedInFlight {
		t.Fatalf("decision %s while a planned failover holds the topology", d)
	}
}

// Emergency and planned failovers share the cooldown in both directions.
func TestPlannedStartsTheSharedCooldown(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	w.run(20)
	w.assertSwitched(t)
	w.sites["b"].up = false
	w.now = w.now.Add(5 * time.Second)
	if d := w.pass().Decision; d.Kind != topology.KindFailoverBlocked || d.Reason != v1alpha1.ReasonCooldown {
		t.Fatalf("emergency right after a planned failover: %s", d)
	}
}

func TestPlannedNewRequestAfterTheEnd(t *testing.T) {
	w := newPWorld(t)
	w.persisted.Spec.FailoverCooldown = metav1.Duration{Duration: time.Second}
	w.annotate("b")
	w.run(20)
	w.assertSwitched(t)
	w.now = w.now.Add(2 * time.Second)
	w.annotate("a")
	w.run(20)
	if b := w.block(); b.Phase != v1alpha1.PhaseSucceeded || b.Target != "a" || w.persisted.Status.ActiveSite != "a" {
		t.Fatalf("second request: %+v", b)
	}
	w.now = w.now.Add(2 * time.Second)
	w.annotate("b") // the same value as the first: a new request all the same
	w.run(20)
	if st := w.persisted.Status; st.ActiveSite != "b" || st.TopologyGeneration != 4 || w.maxWriters > 1 {
		t.Fatalf("third request: %+v", st)
	}
}

func TestPlannedWaitsForTheTargetsSidecar(t *testing.T) {
	w := newPWorld(t)
	w.sidecars["b"] = 1 // live, still on generation 1
	w.annotate("b")
	for range 30 {
		w.step()
		if w.block().Phase == v1alpha1.PhasePromoting {
			break
		}
		w.now = w.now.Add(10 * time.Millisecond)
	}
	for range 5 {
		out, _ := w.step()
		if out.Waiting == "" || w.sites["b"].writable {
			t.Fatalf("promoted before b's sidecar held generation 2: %+v", out)
		}
		w.now = w.now.Add(out.Next)
	}
	w.sidecars["b"] = 2
	w.run(10)
	w.assertSwitched(t)
}

func TestPlannedEmptySource(t *testing.T) {
	w := newPWorld(t)
	for _, s := range w.sites {
		s.executed = s.executed.Subtract(s.executed)
	}
	w.acked = w.acked.Subtract(w.acked)
	w.sites["a"].writable = false // no client writes: the set stays empty
	w.persisted.Status.Sites[0].Fenced = true
	w.annotate("b")
	w.run(20)
	if b := w.block(); b.Phase != v1alpha1.PhaseSucceeded || b.SourceGtidAtFence != "" || *b.TransactionsLost != 0 {
		t.Fatalf("block %+v (phases %v)", b, w.phases)
	}
}

func TestPlannedAnnotationRemovalFailsThenRetries(t *testing.T) {
	w := newPWorld(t)
	w.annotate("zz")
	w.errs["clear"] = errFake
	w.run(5)
	if b := w.block(); b.Phase.Terminal() {
		t.Fatalf("ended although the annotation could not be removed: %+v", b)
	}
	delete(w.errs, "clear")
	w.run(5)
	w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonUnknownSite, v1alpha1.EventPlannedFailoverRejected)
	if w.clears != 1 {
		t.Fatalf("cleared %d times", w.clears)
	}
}

// An unfence that fails during a rollback may still have taken effect on the
// server, so the source must not be left marked held read-only, neither in the
// persisted status nor in the pass's copy that the controller records.
func TestPlannedRollbackUnfenceErrorLeavesSourceUnmarked(t *testing.T) {
	w := newPWorld(t)
	w.lagging["b"] = true
	w.errs["unfence"] = errors.New("unfence: i/o timeout")
	w.annotate("b:maxLagWait=2s")
	unfenceFailed := false
	for range 100 {
		w.tick()
		p := w.pass()
		_, err := w.m.Step(t.Context(), p)
		if err != nil && strings.Contains(err.Error(), "unfence") {
			unfenceFailed = true
			if HeldReadOnly(&p.Group.Status, "a") {
				t.Fatalf("a is marked held read-only after a failed unfence: %+v", p.Group.Status.Sites)
			}
		}
		w.now = w.now.Add(100 * time.Millisecond)
	}
	if !unfenceFailed {
		t.Fatal("the rollback never tried to unfence")
	}
	if HeldReadOnly(&w.persisted.Status, "a") {
		t.Fatalf("a persisted as held read-only: %+v", w.persisted.Status.Sites)
	}
}

// TestPlannedRollbackUnfenceRefusedWithdrawsTheClaim (review of
// d6d851e): an unfence the server refused before changing anything (it
// replicates, or another step holds its topology lock) left the source
// read-only. Marking it maybe-writable would make every later step wait
// for evidence that it cannot write; the claim is withdrawn instead.
func TestPlannedRollbackUnfenceRefusedWithdrawsTheClaim(t *testing.T) {
	w := newPWorld(t)
	w.lagging["b"] = true
	w.errs["unfence"] = fmt.Errorf("unfence a: %w: replication runs", ErrUnfenceRefused)
	w.annotate("b:maxLagWait=2s")
	refused := false
	for range 100 {
		w.tick()
		p := w.pass()
		_, err := w.m.Step(t.Context(), p)
		if errors.Is(err, ErrUnfenceRefused) {
			refused = true
			if MaybeWritable(&w.persisted.Status, "a") {
				t.Fatalf("a persisted maybe-writable after a refused unfence: %+v", w.persisted.Status.Sites)
			}
		}
		w.now = w.now.Add(100 * time.Millisecond)
	}
	if !refused {
		t.Fatal("the rollback never tried to unfence")
	}
}

// TestPlannedNamingKeepsTheSourcesWrites: the active site a wrote with no
// failover record naming it (the recorded promotion set is empty). A
// planned failover a -> b names b active and then fails to promote it (no
// rollback). a is no writer of the history any more, so its writes must be
// in the recorded base, or every site holding them is judged diverged
// (seed 61903 of the real operator's runs, truthful-divergence).
func TestPlannedNamingKeepsTheSourcesWrites(t *testing.T) {
	w := newPWorld(t)
	w.persisted.Status.PromotionRecorded = true
	w.errs["promote"] = errFake
	w.annotate("b")
	w.run(200)
	w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonExecuteFailed, v1alpha1.EventPlannedFailoverFailed)
	st := &w.persisted.Status
	fenced := gtid.MustParseSet(w.block().SourceGtidAtFence)
	if base := Promoted(st); !base.Contains(fenced) {
		t.Fatalf("recorded base %s lacks the fenced set %s", base, fenced)
	}
	p := w.pass()
	p.Input.Promoted, p.Input.PromotedKnown = Promoted(st), PromotedKnown(st)
	for _, s := range topology.Judge(p.Input).Sites {
		if s.Diverged {
			t.Errorf("%s judged diverged holding %s", s.Name, s.Executed)
		}
	}
}
