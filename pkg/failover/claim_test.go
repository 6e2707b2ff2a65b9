package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// racedGate is a MayMakeWritable that passes (leadership held, snapshot
// fresh) and then lets another operator process write the group, as a new
// leader does while this one is paused between its checks and its
// statement. It counts its calls.
func racedGate(w *world, calls *int) func(context.Context, string, time.Time) error {
	return func(context.Context, string, time.Time) error {
		*calls++
		if *calls == 1 {
			w.otherWriter()
		}
		return nil
	}
}

// TestDeposedLeaderDoesNotPromote: the operator decides to promote b and
// passes its checks; before the Promote statement, another operator
// process (the new leader) writes the group. The promotion must stop
// before any SQL reaches b: the claim, written with the optimistic lock
// on the status the decision was made on, conflicts. Before the claim, b
// was promoted on the stale decision.
func TestDeposedLeaderDoesNotPromote(t *testing.T) {
	w := newWorld(t)
	primarySeenDownButSQLAnswers(w)
	e := NewEmergency(w.env())
	calls := 0
	p := w.pass()
	p.MayMakeWritable = racedGate(w, &calls)
	out, err := e.Advance(t.Context(), p)
	if calls != 1 {
		t.Fatalf("the gate ran %d times, want 1", calls)
	}
	if !errors.Is(err, ErrClaim) || out.Completed {
		t.Fatalf("want ErrClaim, got outcome %+v err %v", out, err)
	}
	if w.promotes["b"] != 0 || w.sites["b"].writable {
		t.Fatalf("b was promoted (%d statements) after another writer moved on", w.promotes["b"])
	}
	if MaybeWritable(&w.persisted.Status, "b") {
		t.Fatal("the refused claim was written")
	}
	// The next pass reads the group again, the other writer's change
	// included, and may promote.
	if out, err := e.Advance(t.Context(), w.pass()); err != nil || !out.Completed {
		t.Fatalf("next pass: outcome %+v err %v", out, err)
	}
	assertCompleted(t, w, "b", topology.ConfirmedBySQL)
	if MaybeWritable(&w.persisted.Status, "b") {
		t.Fatal("a promotion that succeeded left its claim")
	}
}

// TestClaimPersistedBeforePromote: the maybe-writable mark is durable
// before the statement runs, so an operator that dies (or is deposed)
// between the two leaves it for the next one, which treats the site as a
// possible writer (Decide fences it before promoting any other site).
func TestClaimPersistedBeforePromote(t *testing.T) {
	w := newWorld(t)
	primarySeenDownButSQLAnswers(w)
	claimed := false
	w.onPromote = func(site string) {
		st := &w.persisted.Status
		claimed = site == "b" && MaybeWritable(st, "b") && !HeldReadOnly(st, "b")
	}
	if out, err := NewEmergency(w.env()).Advance(t.Context(), w.pass()); err != nil || !out.Completed {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	if !claimed {
		t.Fatal("b's claim was not persisted when its Promote statement ran")
	}
}

// TestPlannedDeposedLeaderDoesNotPromote: the same race in a planned
// failover's promotion.
func TestPlannedDeposedLeaderDoesNotPromote(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	calls := 0
	var err error
	for i := 0; i < 60 && calls == 0; i++ {
		w.tick()
		p := w.pass()
		p.MayMakeWritable = racedGate(w.world, &calls)
		var out PlannedOutcome
		out, err = w.m.Step(t.Context(), p)
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
	}
	if calls != 1 || !errors.Is(err, ErrClaim) {
		t.Fatalf("gate calls %d, err %v: want one race and ErrClaim", calls, err)
	}
	if w.promotes["b"] != 0 || w.sites["b"].writable {
		t.Fatalf("b was promoted (%d statements) after another writer moved on", w.promotes["b"])
	}
	w.run(60)
	if b := w.block(); b == nil || b.Phase != v1alpha1.PhaseSucceeded || w.promotes["b"] != 1 {
		t.Fatalf("after the race: block %+v, promotes %d", b, w.promotes["b"])
	}
}

// TestNewLeaderFencesAClaimedSite: an operator claims b and dies before
// its Promote statement reaches b (or is deposed, and the statement may
// still come). The next operator finds c fresher and moves the failover
// to c: it must first fence b, which the persisted claim marks a possible
// writer, and only then promote c (path 6's handling, reused).
func TestNewLeaderFencesAClaimedSite(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	primaryCrashed(w)
	w.now = t0.Add(3 * time.Second) // past a's lease deadline
	w.sites["b"].promoteLost = true
	if _, err := NewEmergency(w.env()).Advance(t.Context(), w.pass()); !errors.Is(err, ErrPromote) {
		t.Fatalf("first operator: want ErrPromote, got %v", err)
	}
	if !MaybeWritable(&w.persisted.Status, "b") || w.sites["b"].writable {
		t.Fatalf("want b claimed and still read-only: %+v", w.persisted.Status.Sites)
	}
	w.sites["b"].promoteLost = false
	w.sites["c"].executed = w.sites["a"].executed // c turns out fresher
	fencedFirst := true
	w.onPromote = func(site string) {
		if site == "c" && MaybeWritable(&w.persisted.Status, "b") {
			fencedFirst = false
		}
	}
	e := NewEmergency(w.env()) // the next operator process
	for i := 0; i < 6; i++ {
		w.now = w.now.Add(time.Second)
		if _, err := runAsLoop(t, w, e); err != nil {
			t.Logf("pass %d: %v", i, err)
		}
	}
	if !fencedFirst {
		t.Fatal("c was promoted while b's claim was standing")
	}
	if st := w.persisted.Status; st.ActiveSite != "c" || st.Failover != nil || !HeldReadOnly(&st, "b") {
		t.Fatalf("want the failover done to c with b held read-only: %+v", st)
	}
}
