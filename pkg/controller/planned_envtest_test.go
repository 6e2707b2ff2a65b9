//go:build envtest

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// A planned switchover of a caught-up pair under four writers: Succeeded
// with transactionsLost 0, every acknowledged write on the new primary,
// never two writers, and clients, DNS and replication follow.
func TestPlannedSwitchoverUnderLoad(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	run := e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(4, e.followPrimary())
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 20 })
	watch := e.watchWriters()

	start := time.Now()
	e.annotate("b")
	g := e.planned("b", v1alpha1.PhaseSucceeded, 20*time.Second)
	took := time.Since(start)
	e.eventually(5*time.Second, "writes on b", func() bool { return w.ackedOn("b", start) > 20 })
	acked := w.halt()
	if both := watch.end(); len(both) > 0 {
		t.Fatalf("two writers at once: %v", both)
	}
	win, ok := w.window("a", "b", start)
	t.Logf("switchover took %s, write window %s (ok=%v), %d writes acknowledged", took, win, ok, len(acked))
	e.noAcksLost("b", acked)

	b, st := g.Status.PlannedFailover, g.Status
	if b.TransactionsLost == nil || *b.TransactionsLost != 0 || b.SourcePrimary != "a" || b.Target != "b" ||
		b.SourceGtidAtFence == "" || b.TargetGtidAtPromotion == "" || b.StartTime == nil || b.CompletionTime == nil {
		t.Fatalf("status.plannedFailover: %+v", b)
	}
	if st.ActiveSite != "b" || st.TopologyGeneration != 2 || st.LastFailover == nil ||
		st.LastFailover.Kind != v1alpha1.KindPlanned || st.LastFailover.From != "a" {
		t.Fatalf("status: %+v", st)
	}
	e.eventually(5*time.Second, "routing on b", func() bool {
		target, ip := e.dnsTarget("b")
		return target == ip && e.podRole("b") == v1alpha1.RolePrimary && e.podRole("a") == v1alpha1.RoleReplica
	})
	e.eventually(20*time.Second, "a replicates from b", func() bool {
		s := site(e.get(), "a")
		return s.State == v1alpha1.StateReadOnly && s.Replicating
	})
	e.assertEvents(v1alpha1.EventPlannedFailoverStarted, v1alpha1.EventPlannedFailoverDraining,
		v1alpha1.EventPlannedFailoverLagOK, v1alpha1.EventPlannedFailoverCompleted, v1alpha1.EventDNSFlipped)
	m := run.op.Metrics()
	if n := e.counter(m.Planned.Total, e.ns, "orders", "b", failover.PlannedResultSuccess); n != 1 {
		t.Errorf("bloodraven_planned_failovers_total{result=success} = %v", n)
	}
	// bloodraven_failovers_total counts automatic failovers only (seed 002).
	if n := testutil.CollectAndCount(m.Failovers); n != 0 {
		t.Errorf("a planned failover made %d bloodraven_failovers_total series, want none", n)
	}
	if n := testutil.CollectAndCount(m.Planned.Duration); n != 1 {
		t.Errorf("duration histogram series: %d", n)
	}
}

// A target whose SQL thread stopped never catches up: after maxLagWait the
// source is unfenced and labelled primary again, DNS never moved, and the
// clients write to it again.
func TestPlannedLagTimeoutRollsBack(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	run := e.startOperatorWith(slowProbes(400 * time.Millisecond))
	e.keepAsking("a", "b")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(2, e.followPrimary())
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 5 })
	dnsBefore, _ := e.dnsTarget("a")

	e.annotate("b:maxLagWait=2s")
	e.planned("b:maxLagWait=2s", v1alpha1.PhasePending, 10*time.Second)
	// From Pending on, every pass is the planned failover's: nothing restarts the thread.
	e.rootExec("b", "STOP SLAVE SQL_THREAD")
	stopped := time.Now()
	g := e.planned("b:maxLagWait=2s", v1alpha1.PhaseFailed, 30*time.Second)
	b := g.Status.PlannedFailover
	if b.Reason != v1alpha1.ReasonLagTimeout || b.SourceGtidAtFence == "" || g.Status.ActiveSite != "a" ||
		g.Status.TopologyGeneration != 1 || g.Status.LastFailover != nil {
		t.Fatalf("after the lag timeout: %+v", g.Status)
	}
	if w.ackedOn("a", stopped) == 0 {
		t.Fatal("no write reached a while b's SQL thread was stopped: the test proves nothing")
	}
	if !e.writable("a") || e.writable("b") {
		t.Fatalf("a writable %v, b writable %v", e.writable("a"), e.writable("b"))
	}
	if dns, _ := e.dnsTarget("a"); dns != dnsBefore {
		t.Fatalf("DNS moved: %s -> %s", dnsBefore, dns)
	}
	end := time.Now()
	e.eventually(5*time.Second, "role label back on a", func() bool { return e.podRole("a") == v1alpha1.RolePrimary })
	e.eventually(10*time.Second, "writes on a again", func() bool { return w.ackedOn("a", end) > 5 })
	e.noAcksLost("a", w.halt())
	e.assertEvents(v1alpha1.EventPlannedFailoverFailed)
	if n := e.counter(run.op.Metrics().Planned.Total, e.ns, "orders", "b", failover.PlannedResultFailedTimeout); n != 1 {
		t.Errorf("bloodraven_planned_failovers_total{result=failed_timeout} = %v", n)
	}
}

// Unknown and dr-only targets are rejected without any fence: the source
// stays writable and labelled primary throughout.
func TestPlannedRejectsTargets(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(func(spec map[string]any) {
		spec["sites"].([]any)[2].(map[string]any)["role"] = string(v1alpha1.RoleDROnly)
	})
	run := e.startOperator()
	e.healthy()
	e.eventually(5*time.Second, "a labelled primary", func() bool { return e.podRole("a") == v1alpha1.RolePrimary })
	stop := make(chan struct{})
	lapses := make(chan string, 100)
	go func() {
		defer close(lapses)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if !e.writable("a") {
				lapses <- "a read-only"
			}
			if r := e.podRole("a"); r != v1alpha1.RolePrimary {
				lapses <- "a's role label " + r
			}
		}
	}()
	cases := []struct{ request, reason string }{
		{"zz", v1alpha1.ReasonUnknownSite},
		{"c", v1alpha1.ReasonTargetUnhealthy},
		{"c:maxLagWait=10s", v1alpha1.ReasonTargetUnhealthy},
	}
	for _, c := range cases {
		e.annotate(c.request)
		g := e.planned(c.request, v1alpha1.PhaseFailed, 10*time.Second)
		if b := g.Status.PlannedFailover; b.Reason != c.reason || b.SourceGtidAtFence != "" {
			t.Fatalf("%q: %+v, want %s without a fence", c.request, b, c.reason)
		}
	}
	close(stop)
	for l := range lapses {
		t.Fatalf("the source was touched: %s", l)
	}
	if g := e.get(); g.Status.TopologyGeneration != 1 || g.Status.ActiveSite != "a" {
		t.Fatalf("topology changed: %+v", g.Status)
	}
	e.assertEvents(v1alpha1.EventPlannedFailoverRejected)
	m := run.op.Metrics().Planned.Total
	if n := e.counter(m, e.ns, "orders", "", failover.PlannedResultRejected); n != 1 {
		t.Errorf("rejected with an unknown target: %v", n)
	}
	if n := e.counter(m, e.ns, "orders", "c", failover.PlannedResultRejected); n != 2 {
		t.Errorf("rejected with target c: %v", n)
	}
}

// Every malformed annotation value ends in Failed/InvalidRequest with an
// Event, and the annotation is removed.
func TestPlannedBadAnnotations(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	e.startOperator()
	e.healthy()
	bad := []string{"", "B", " b", "b ", "b:", "b:maxLagWait", "b:maxLagWait=", "b:maxLagWait=30",
		"b:maxLagWait=-5s", "b:maxLagWait=0s", "b:maxLagWait=25h", "b:maxlagwait=5s", "b:drainTimeout=5s",
		"b:maxLagWait=5s,maxLagWait=6s", "b:maxLagWait=5s:x", "b,a", "b/a", strings.Repeat("b", 41)}
	for _, v := range bad {
		e.annotate(v)
		g := e.planned(v, v1alpha1.PhaseFailed, 10*time.Second)
		if b := g.Status.PlannedFailover; b.Reason != v1alpha1.ReasonInvalidRequest || b.Message == "" {
			t.Fatalf("%q: %+v", v, b)
		}
	}
	rejected := 0
	for _, ev := range e.events(v1alpha1.EventPlannedFailoverRejected) {
		if strings.Contains(ev.Note, v1alpha1.ReasonInvalidRequest) {
			rejected++
		}
	}
	if rejected < len(bad) {
		t.Errorf("%d InvalidRequest Events for %d bad values", rejected, len(bad))
	}
	if g := e.get(); g.Status.TopologyGeneration != 1 || !e.writable("a") {
		t.Fatalf("topology changed: %+v", g.Status)
	}
}

// The cooldown: with reject a request inside it fails and says when to
// retry; with defer it waits (annotation kept), can be cancelled by
// removing the annotation, and goes through once the cooldown ends. The
// planned failover's lastFailover then holds back an emergency.
func TestPlannedCooldown(t *testing.T) {
	const cool = 8 * time.Second
	e := newEnv(t, "a", "b")
	e.createGroup(func(spec map[string]any) { spec["failoverCooldown"] = cool.String() })
	e.startOperator()
	e.keepAsking("a", "b")
	e.healthy()
	e.annotate("b")
	first := e.planned("b", v1alpha1.PhaseSucceeded, 20*time.Second).Status.LastFailover.Time.Time

	e.annotate("a")
	g := e.planned("a", v1alpha1.PhaseFailed, 10*time.Second)
	b := g.Status.PlannedFailover
	if b.Reason != v1alpha1.ReasonCooldownActive || b.RetryAfter == nil || !strings.Contains(b.Message, "retry after") {
		t.Fatalf("reject: %+v", b)
	}
	if !e.writable("b") || g.Status.ActiveSite != "b" {
		t.Fatal("a rejected request fenced the source")
	}

	e.setOnCooldown(v1alpha1.CooldownDefer)
	e.annotate("a:maxLagWait=3m")
	b = e.planned("a:maxLagWait=3m", v1alpha1.PhaseDeferred, 10*time.Second).Status.PlannedFailover
	if b.Reason != v1alpha1.ReasonCooldownActive || b.RetryAfter == nil || !b.RetryAfter.Time.Equal(first.Add(cool)) {
		t.Fatalf("defer: %+v (last failover %s)", b, first)
	}
	if v, ok := e.annotated(); !ok || v != "a:maxLagWait=3m" {
		t.Fatal("a deferred request lost its annotation")
	}
	e.annotate(nil)
	if b := e.planned("a:maxLagWait=3m", v1alpha1.PhaseFailed, 10*time.Second).Status.PlannedFailover; b.Reason != v1alpha1.ReasonCancelled {
		t.Fatalf("cancel: %+v", b)
	}
	e.annotate("a:maxLagWait=1m")
	e.planned("a:maxLagWait=1m", v1alpha1.PhaseDeferred, 10*time.Second)
	g = e.planned("a:maxLagWait=1m", v1alpha1.PhaseSucceeded, cool+20*time.Second)
	if done := g.Status.PlannedFailover.CompletionTime.Time; done.Before(first.Add(cool)) || g.Status.ActiveSite != "a" {
		t.Fatalf("deferred request ran at %s, cooldown until %s: %+v", done, first.Add(cool), g.Status)
	}
	e.assertEvents(v1alpha1.EventPlannedFailoverDeferred, v1alpha1.EventPlannedFailoverRejected,
		v1alpha1.EventPlannedFailoverFailed)

	// Shared both ways: losing the new primary inside the cooldown is not failed over.
	e.db.Kill(0)
	e.eventually(cool, "FailoverBlocked/Cooldown", func() bool {
		c := metaCondition(e.get(), v1alpha1.ConditionFailoverBlocked)
		return c != nil && c.Reason == v1alpha1.ReasonCooldown
	})
}

func (e *env) setOnCooldown(p v1alpha1.CooldownPolicy) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"plannedFailover":{"onCooldown":%q}}}`, p)
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Namespace, g.Name = e.ns, "orders"
	if err := cp.Client.Patch(e.t.Context(), g, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		e.t.Fatalf("onCooldown %s: %v", p, err)
	}
}

// The operator dies in every phase in turn; the next operator finishes the
// request from the persisted phase, with one writer at every moment and
// every acknowledged write on the new primary.
func TestPlannedOperatorKilledInEachPhase(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(func(spec map[string]any) { spec["failoverCooldown"] = "1s" })
	first := e.startOperator()
	e.keepAsking("a", "b")
	e.healthy()
	e.createWriteTable("a")
	first.stop()
	w := e.startAppWriters(2, e.followPrimary())
	watch := e.watchWriters()
	stops := []struct {
		phase  v1alpha1.PlannedFailoverPhase
		fenced bool // Draining's second step
	}{
		{v1alpha1.PhasePending, false}, {v1alpha1.PhaseValidating, false}, {v1alpha1.PhaseDraining, false},
		{v1alpha1.PhaseDraining, true}, {v1alpha1.PhaseWaitingForLag, false}, {v1alpha1.PhasePromoting, false},
		{v1alpha1.PhaseResuming, false},
	}
	from, to := "a", "b"
	for i, s := range stops {
		request := fmt.Sprintf("%s:maxLagWait=%ds", to, 30+i) // a new value every round
		slow := e.startOperatorWith(slowProbes(700 * time.Millisecond))
		// The fence's own pass runs the first round of the drain: only a
		// client that keeps coming back holds Draining in its second step.
		linger := func() {}
		if s.fenced {
			linger = e.lingerOn(from)
		}
		e.annotate(request)
		e.eventually(20*time.Second, fmt.Sprintf("round %d: %s (fenced %v)", i, s.phase, s.fenced), func() bool {
			b := e.get().Status.PlannedFailover
			return b != nil && b.Request == request && b.Phase == s.phase &&
				(s.phase != v1alpha1.PhaseDraining || (b.SourceGtidAtFence != "") == s.fenced)
		})
		slow.stop()
		linger()
		t.Logf("round %d: operator killed in %s (fenced %v)", i, s.phase, s.fenced)
		next := e.startOperator()
		g := e.planned(request, v1alpha1.PhaseSucceeded, 30*time.Second)
		next.stop()
		if b := g.Status.PlannedFailover; *b.TransactionsLost != 0 || g.Status.ActiveSite != to {
			t.Fatalf("round %d: %+v", i, g.Status)
		}
		e.noAcksLost(to, w.snapshot())
		time.Sleep(time.Second) // the cooldown
		from, to = to, from
	}
	if both := watch.end(); len(both) > 0 {
		t.Fatalf("two writers at once: %v", both)
	}
	e.noAcksLost(from, w.halt())
}
