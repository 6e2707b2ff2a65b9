//go:build envtest

package controller_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// A leaseTimeout change rolls the sites one at a time, replicas in spec
// order, and the primary last after a switchover through the planned
// state machine (transactionsLost 0), under four writers: never two sites
// down, one switchover, no acknowledged write lost. The operator is
// restarted after the first site's restart and resumes from the API.
func TestRolloutOrdered(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	sim := e.simulateDeployments()
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	e.createWriteTable("a")
	w := e.startAppWriters(4, e.followPrimary())
	e.eventually(10*time.Second, "writes through -primary", func() bool { return w.ackedOn("a", time.Time{}) > 20 })
	watch := e.watchWriters()
	phases := e.logPhases()

	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(30*time.Second, "b restarted", func() bool { return len(sim.restarted()) >= 1 })
	e.op.stop()
	e.startOperator()
	e.eventually(90*time.Second, "every site updated", func() bool {
		g := e.get()
		return len(sim.restarted()) == 3 && g.Status.Phase == v1alpha1.GroupPhaseNone
	})
	acked := w.halt()
	if both := watch.end(); len(both) > 0 {
		t.Fatalf("two writers at once: %v", both)
	}
	if got := sim.restarted(); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Fatalf("restart order %v, want b, c, a", got)
	}
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
	if r := sim.rebooted(); len(r) > 0 {
		t.Fatalf("restarted mysqld exited again (stopped by its sidecar?): %v", r)
	}
	g := e.get()
	b := g.Status.PlannedFailover
	if b == nil || b.Origin != v1alpha1.OriginUpdate || b.Phase != v1alpha1.PhaseSucceeded || b.SourcePrimary != "a" ||
		b.Target != "b" || b.TransactionsLost == nil || *b.TransactionsLost != 0 {
		t.Fatalf("status.plannedFailover %+v, want the update's switchover a -> b, Succeeded, nothing lost", b)
	}
	if g.Status.ActiveSite != "b" {
		t.Fatalf("active site %s, want b", g.Status.ActiveSite)
	}
	if n := len(e.events(v1alpha1.EventPlannedFailoverStarted)); n != 1 {
		t.Errorf("%d planned failovers started, want exactly one", n)
	}
	e.noAcksLost("b", acked)
	e.assertEvents(v1alpha1.EventSiteUpdated, v1alpha1.EventUpdateSwitchover, v1alpha1.EventUpdateCompleted)
	seen := strings.Join(phases.lines(), "\n")
	// "updating b (3 of 3 left)" may never be written: the first operator
	// stops as soon as b restarts, maybe before its pass recorded it.
	for _, want := range []string{"Updating: updating c (2 of 3 left)",
		"Updating: switching the primary a over to b", "Updating: updating a (1 of 3 left)"} {
		if !strings.Contains(seen, want) {
			t.Errorf("phases seen:\n%s\nwant a line with %q", seen, want)
		}
	}
}

// supervised: the replicas are updated by themselves; the update stops at
// WaitingForUser naming the command, and goes on once a person switched
// the primary over. While a site is updated, a planned failover asked for
// is refused with ConcurrentOperation.
func TestRolloutSupervisedAndInterlock(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(func(spec map[string]any) {
		spec["updates"] = map[string]any{"primaryUpdateStrategy": string(v1alpha1.UpdateSupervised)}
	})
	sim := e.simulateDeployments()
	release := sim.holdSite("b")
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()

	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(30*time.Second, "b down for its update", func() bool {
		g := e.get()
		return len(sim.restarted()) == 1 && g.Status.Phase == v1alpha1.GroupPhaseUpdating &&
			strings.Contains(g.Status.Message, "waiting for b")
	})
	// The interlock: refused before any site check, nothing fenced.
	e.annotate("b")
	g := e.planned("b", v1alpha1.PhaseFailed, 20*time.Second)
	if r := g.Status.PlannedFailover.Reason; r != v1alpha1.ReasonConcurrentOperation {
		t.Fatalf("planned failover during the update: %s, want ConcurrentOperation", r)
	}
	if !e.writable("a") || g.Status.ActiveSite != "a" {
		t.Fatal("the refused request touched the primary")
	}
	release()
	e.eventually(60*time.Second, "WaitingForUser", func() bool {
		return e.get().Status.Phase == v1alpha1.GroupPhaseWaitingForUser
	})
	g = e.get()
	want := "kubectl annotate mfg orders -n " + e.ns + " " + v1alpha1.PlannedFailoverAnnotation + "=b --overwrite"
	if !strings.Contains(g.Status.Message, want) {
		t.Fatalf("message %q, want it to name %q", g.Status.Message, want)
	}
	time.Sleep(2 * time.Second) // it waits: the primary is not restarted
	if got := sim.restarted(); !slices.Equal(got, []string{"b"}) || e.get().Status.ActiveSite != "a" {
		t.Fatalf("restarts %v before the user acted, want b only", got)
	}
	e.assertEvents(v1alpha1.EventUpdateWaitingForUser)
	e.annotate("b:maxLagWait=1m") // another value than the refused request's, to tell them apart
	g = e.planned("b:maxLagWait=1m", v1alpha1.PhaseSucceeded, 30*time.Second)
	if g.Status.PlannedFailover.Origin == v1alpha1.OriginUpdate {
		t.Fatalf("the person's request recorded as the update's")
	}
	e.eventually(60*time.Second, "the old primary updated as a replica", func() bool {
		return slices.Equal(sim.restarted(), []string{"b", "a"}) && e.get().Status.Phase == v1alpha1.GroupPhaseNone
	})
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
	if r := sim.rebooted(); len(r) > 0 {
		t.Fatalf("restarted mysqld exited again (stopped by its sidecar?): %v", r)
	}
}

// A site fenced by an administrator is never updated nor waited for, and
// the update names it.
func TestRolloutSkipsFencedSite(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(func(spec map[string]any) {
		spec["updates"] = map[string]any{"primaryUpdateMethod": string(v1alpha1.UpdateRestart)}
		spec["failureThreshold"] = 40 // the restart in place is not a lost primary
	})
	sim := e.simulateDeployments()
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	fenced := "c"
	e.fenceSites(&fenced)
	phases := e.logPhases()
	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(90*time.Second, "a and b updated", func() bool {
		return len(sim.restarted()) == 2 && e.get().Status.Phase == v1alpha1.GroupPhaseNone
	})
	if got := sim.restarted(); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("restarts %v, want b then a (restarted in place), never the fenced c", got)
	}
	if r := sim.rebooted(); len(r) > 0 {
		t.Fatalf("restarted mysqld exited again (stopped by its sidecar?): %v", r)
	}
	if g := e.get(); g.Status.ActiveSite != "a" || g.Status.PlannedFailover != nil {
		t.Fatalf("restart method: active %s, planned %+v; want a restarted in place, no switchover",
			g.Status.ActiveSite, g.Status.PlannedFailover)
	}
	if seen := strings.Join(phases.lines(), "\n"); !strings.Contains(seen, "not updated (fenced or diverged): c") {
		t.Errorf("phases seen:\n%s\nwant c named as not updated", seen)
	}
}

// supervised with restart: the update stops before the primary as with
// switchover (the strategy comes first) and never restarts it in place by
// itself; once a person switched the primary over, the old primary is
// updated as a replica, and the update starts no switchover of its own.
func TestRolloutSupervisedRestart(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(func(spec map[string]any) {
		spec["updates"] = map[string]any{"primaryUpdateStrategy": string(v1alpha1.UpdateSupervised),
			"primaryUpdateMethod": string(v1alpha1.UpdateRestart)}
	})
	sim := e.simulateDeployments()
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()

	e.changeLeaseTimeout(2 * time.Second)
	e.eventually(60*time.Second, "WaitingForUser", func() bool {
		return e.get().Status.Phase == v1alpha1.GroupPhaseWaitingForUser
	})
	g := e.get()
	want := "kubectl annotate mfg orders -n " + e.ns + " " + v1alpha1.PlannedFailoverAnnotation + "=b --overwrite"
	if !strings.Contains(g.Status.Message, want) {
		t.Fatalf("message %q, want it to name %q", g.Status.Message, want)
	}
	time.Sleep(3 * time.Second) // it waits: the primary is not restarted in place
	if got := sim.restarted(); !slices.Equal(got, []string{"b"}) || !e.writable("a") || e.get().Status.ActiveSite != "a" {
		t.Fatalf("restarts %v before the user acted (active %s), want b only", got, e.get().Status.ActiveSite)
	}
	e.annotate("b")
	g = e.planned("b", v1alpha1.PhaseSucceeded, 30*time.Second)
	if g.Status.PlannedFailover.Origin == v1alpha1.OriginUpdate {
		t.Fatalf("the person's request recorded as the update's")
	}
	e.eventually(60*time.Second, "the old primary updated as a replica", func() bool {
		return slices.Equal(sim.restarted(), []string{"b", "a"}) && e.get().Status.Phase == v1alpha1.GroupPhaseNone
	})
	if g := e.get(); g.Status.ActiveSite != "b" || g.Status.TopologyGeneration != 2 {
		t.Fatalf("active %s at generation %d after the update, want b at 2", g.Status.ActiveSite, g.Status.TopologyGeneration)
	}
	if n := len(e.events(v1alpha1.EventUpdateSwitchover)); n != 0 {
		t.Errorf("%d switchovers started by the update, want none", n)
	}
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
	if r := sim.rebooted(); len(r) > 0 {
		t.Fatalf("restarted mysqld exited again (stopped by its sidecar?): %v", r)
	}
	e.assertEvents(v1alpha1.EventUpdateWaitingForUser, v1alpha1.EventUpdateCompleted)
}
