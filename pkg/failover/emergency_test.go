package failover

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// run makes one pass at w.now and returns its outcome.
func run(t *testing.T, w *world, e *Emergency) (Outcome, error) {
	t.Helper()
	return e.Advance(t.Context(), w.pass())
}

// primaryPartitioned: a still writes but neither the poll nor SQL reaches it.
func primaryPartitioned(w *world) { w.sites["a"].up = false }

// primaryCrashed: a's mysqld is down.
func primaryCrashed(w *world) { w.sites["a"].up, w.sites["a"].writable = false, false }

// primarySeenDownButSQLAnswers: the debounced state is unreachable, SQL gets through.
func primarySeenDownButSQLAnswers(w *world) { w.sites["a"].seenDown = true }

func assertCompleted(t *testing.T, w *world, to string, confirmedBy string) {
	t.Helper()
	st := w.persisted.Status
	if st.Failover != nil || st.LastFailover == nil || st.LastFailover.To != to || st.ActiveSite != to {
		t.Fatalf("not completed to %s: failover=%+v last=%+v active=%s", to, st.Failover, st.LastFailover, st.ActiveSite)
	}
	if got := w.writers(); !slices.Equal(got, []string{to}) {
		t.Fatalf("writers %v, want only %s", got, to)
	}
	if w.dns != to || w.labels != to || w.failovers != 1 {
		t.Fatalf("dns=%s labels=%s failovers=%d", w.dns, w.labels, w.failovers)
	}
	if confirmedBy != "" && !slices.ContainsFunc(w.steps, func(s string) bool { return strings.HasSuffix(s, ":"+confirmedBy) }) {
		t.Fatalf("steps %v: no step confirmed by %s", w.steps, confirmedBy)
	}
}

func TestEmergencyOnePass(t *testing.T) {
	cases := []struct {
		name        string
		setup       func(w *world)
		confirmedBy string
	}{
		{"old primary answering SQL is fenced by SQL", primarySeenDownButSQLAnswers, topology.ConfirmedBySQL},
		{"crashed primary confirmed by its sidecar's mysqld-down report", func(w *world) {
			primaryCrashed(w)
			w.reports["a"] = &topology.Report{At: t0.Add(time.Second), ViewOperator: "op1", ViewSeq: 101, MysqldDown: true}
			w.now = t0.Add(time.Second)
		}, topology.ConfirmedBySidecarReport},
		{"partitioned primary whose sidecar reports itself fenced", func(w *world) {
			primaryPartitioned(w)
			w.reports["a"] = &topology.Report{At: t0.Add(time.Second), ViewOperator: "op1", ViewSeq: 101, Fenced: true}
			w.sites["a"].writable = false
			w.now = t0.Add(time.Second)
		}, topology.ConfirmedBySidecarReport},
		{"crashed primary past its lease deadline", func(w *world) {
			primaryCrashed(w)
			w.now = t0.Add(2100 * time.Millisecond)
		}, topology.ConfirmedByLease},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.setup(w)
			out, err := run(t, w, NewEmergency(w.env()))
			if err != nil || !out.Started || !out.Completed {
				t.Fatalf("outcome %+v, err %v", out, err)
			}
			assertCompleted(t, w, "b", c.confirmedBy)
			want := []string{"Intent:", "Fencing:", "Promoting:" + c.confirmedBy, "Promoting:" + c.confirmedBy,
				"Routing:" + c.confirmedBy, "Repointing:" + c.confirmedBy, "done"}
			if !slices.Equal(w.steps, want) {
				t.Errorf("persisted steps %v, want %v", w.steps, want)
			}
			if w.persisted.Status.TopologyGeneration != 2 || !slices.Equal(w.published, []int64{2}) {
				t.Errorf("generation %d published %v", w.persisted.Status.TopologyGeneration, w.published)
			}
			wantEvents := []string{v1alpha1.EventFailoverStarted, v1alpha1.EventDNSFlipped, v1alpha1.EventFailoverExecuted}
			if !slices.Equal(w.events, wantEvents) || w.flips != 1 || !slices.Equal(w.tainted, []string{"a"}) {
				t.Errorf("events %v flips %d tainted %v", w.events, w.flips, w.tainted)
			}
		})
	}
}

func TestEmergencyWaits(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(w *world)
		waitStep v1alpha1.FailoverStep
		// then changes the world; the next pass must complete.
		then        func(w *world)
		confirmedBy string
	}{
		{"partitioned primary before its lease deadline", primaryPartitioned, v1alpha1.StepFencing,
			func(w *world) { w.now = t0.Add(2001 * time.Millisecond); w.sites["a"].writable = false }, topology.ConfirmedByLease},
		{"a sidecar report from before the failure does not confirm", func(w *world) {
			primaryPartitioned(w)
			w.reports["a"] = &topology.Report{At: t0.Add(-time.Second), ViewOperator: "op1", ViewSeq: 99, Fenced: true}
		}, v1alpha1.StepFencing, func(w *world) {
			w.reports["a"] = &topology.Report{At: t0.Add(time.Second), ViewOperator: "op1", ViewSeq: 101, Fenced: true}
			w.sites["a"].writable = false
		}, topology.ConfirmedBySidecarReport},
		{"peer sidecar not yet on the new generation holds the lease deadline", func(w *world) {
			primaryPartitioned(w)
			w.sidecars["b"] = 1
			w.now = t0.Add(5 * time.Second)
		}, v1alpha1.StepFencing, func(w *world) { w.sidecars["b"] = 2; w.sites["a"].writable = false }, topology.ConfirmedByLease},
		{"target's live sidecar on the old generation", func(w *world) {
			primarySeenDownButSQLAnswers(w)
			w.sidecars["b"] = 1
		}, v1alpha1.StepPromoting, func(w *world) { w.sidecars["b"] = 2 }, topology.ConfirmedBySQL},
		{"target's sidecar never adopts: promotion after the adoption wait", func(w *world) {
			primarySeenDownButSQLAnswers(w)
			w.sidecars["b"] = 1
		}, v1alpha1.StepPromoting, func(w *world) { w.now = w.now.Add(1001 * time.Millisecond) }, topology.ConfirmedBySQL},
		{"relay log not drained", func(w *world) {
			primarySeenDownButSQLAnswers(w)
			w.drainErr = ErrDrainPending
		}, v1alpha1.StepPromoting, func(w *world) { w.now = w.now.Add(3001 * time.Millisecond) }, topology.ConfirmedBySQL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.setup(w)
			e := NewEmergency(w.env())
			out, err := run(t, w, e)
			if err != nil || out.Completed || out.Step != c.waitStep || out.Waiting == "" {
				t.Fatalf("first pass: outcome %+v, err %v; want waiting at %s", out, err, c.waitStep)
			}
			if w.sites["b"].writable {
				t.Fatal("b made writable while waiting")
			}
			c.then(w)
			if out, err = run(t, w, e); err != nil || !out.Completed {
				t.Fatalf("second pass: outcome %+v, err %v", out, err)
			}
			assertCompleted(t, w, "b", c.confirmedBy)
		})
	}
}

func TestEmergencyDoesNotStart(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
	}{
		{"healthy group", func(*world) {}},
		{"replica lost", func(w *world) { w.sites["b"].up = false }},
		{"cooldown after an earlier failover", func(w *world) {
			primaryCrashed(w)
			w.reports["a"] = &topology.Report{At: t0, ViewOperator: "op1", ViewSeq: 100, MysqldDown: true}
			w.persisted.Status.LastFailover = &v1alpha1.FailoverRecord{Time: metav1.NewTime(t0.Add(-10 * time.Second)),
				From: "b", To: "a", Kind: v1alpha1.KindPlanned}
		}},
		{"planned failover in flight", func(w *world) {
			primaryCrashed(w)
			w.persisted.Status.PlannedFailover = &v1alpha1.PlannedFailoverStatus{Phase: v1alpha1.PhaseDraining}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.setup(w)
			out, err := run(t, w, NewEmergency(w.env()))
			if err != nil || out != (Outcome{}) || w.persists != 0 || w.promotes["b"] != 0 {
				t.Fatalf("outcome %+v err %v persists %d", out, err, w.persists)
			}
		})
	}
}

// TestEmergencyCrashBetweenSteps crashes the operator at every status write
// of a failover (the write is lost, everything before it happened), restarts
// it with empty memory and checks that it finishes with one writer, one
// generation bump and one promotion.
func TestEmergencyCrashBetweenSteps(t *testing.T) {
	for failAt := 1; failAt <= 7; failAt++ {
		t.Run("crash at write "+string(rune('0'+failAt)), func(t *testing.T) {
			w := newWorld(t)
			primarySeenDownButSQLAnswers(w)
			w.sites["b"].executed = w.sites["a"].executed // b holds everything: a coming back does not retarget
			w.failAt = failAt
			if _, err := run(t, w, NewEmergency(w.env())); !errors.Is(err, ErrPersist) {
				t.Fatalf("want the crash to surface as ErrPersist, got %v", err)
			}
			w.failAt = 0
			// The restarted operator sees a read-only once it was fenced.
			w.sites["a"].seenDown = w.sites["a"].writable
			e := NewEmergency(w.env())
			for i := 0; i < 3 && (w.persisted.Status.Failover != nil || w.persisted.Status.LastFailover == nil); i++ {
				if _, err := run(t, w, e); err != nil {
					t.Fatalf("resume pass %d: %v", i, err)
				}
			}
			assertCompleted(t, w, "b", "")
			if g := w.persisted.Status.TopologyGeneration; g != 2 {
				t.Errorf("generation %d, want 2", g)
			}
			if w.promotes["b"] != 1 {
				t.Errorf("b promoted %d times", w.promotes["b"])
			}
		})
	}
}

// TestEmergencyConflictBetweenWrites makes one status write of a one-pass
// failover meet a conflict, after which the group holds a re-read copy of
// its status: every later step must still be persisted, once.
func TestEmergencyConflictBetweenWrites(t *testing.T) {
	cases := []struct {
		name       string
		conflictAt int
	}{
		{"conflict on the intent", 1},
		{"conflict on Fencing", 2},
		{"conflict on Promoting", 3},
		{"conflict on the target's cleared fence mark, before its promotion", 4},
		{"conflict on Routing", 5},
		{"conflict on Repointing", 6},
		{"conflict on completion", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			primarySeenDownButSQLAnswers(w)
			w.conflictAt = c.conflictAt
			out, err := run(t, w, NewEmergency(w.env()))
			if err != nil || !out.Completed {
				t.Fatalf("outcome %+v, err %v", out, err)
			}
			assertCompleted(t, w, "b", topology.ConfirmedBySQL)
			by := topology.ConfirmedBySQL
			want := []string{"Intent:", "Fencing:", "Promoting:" + by, "Promoting:" + by, "Routing:" + by,
				"Repointing:" + by, "done"}
			if !slices.Equal(w.steps, want) {
				t.Errorf("persisted steps %v, want %v", w.steps, want)
			}
			if w.promotes["b"] != 1 {
				t.Errorf("b promoted %d times, want 1", w.promotes["b"])
			}
		})
	}
}

func TestEmergencyRoutingErrorIsRetried(t *testing.T) {
	w := newWorld(t)
	primarySeenDownButSQLAnswers(w)
	w.routeErr = errors.New("apiserver down")
	e := NewEmergency(w.env())
	if _, err := run(t, w, e); !errors.Is(err, ErrRoute) {
		t.Fatalf("want ErrRoute, got %v", err)
	}
	if it := w.persisted.Status.Failover; it == nil || it.Step != v1alpha1.StepRouting {
		t.Fatalf("want the Routing step persisted, got %+v", it)
	}
	w.routeErr = nil
	if out, err := run(t, w, e); err != nil || !out.Completed {
		t.Fatalf("retry: %+v %v", out, err)
	}
	assertCompleted(t, w, "b", "")
}

func TestEmergencyRetargets(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	primaryPartitioned(w)
	e := NewEmergency(w.env())
	if out, _ := run(t, w, e); out.Step != v1alpha1.StepFencing {
		t.Fatalf("want a wait at Fencing, got %+v", out)
	}
	// b dies before it is promoted; c is the only candidate left.
	w.sites["b"].up = false
	w.sites["a"].writable = false
	w.now = t0.Add(3 * time.Second)
	w.sidecars = map[string]int64{}
	out, err := run(t, w, e)
	if err != nil {
		t.Fatal(err)
	}
	st := w.persisted.Status
	if st.TopologyGeneration != 3 || st.ActiveSite != "c" {
		t.Fatalf("after retarget: generation %d active %s outcome %+v", st.TopologyGeneration, st.ActiveSite, out)
	}
	if w.promotes["b"] != 0 {
		t.Fatal("b promoted after it was dropped")
	}
}

// TestEmergencyOldPrimaryBackAndFresher: the old primary answers again,
// fenced, before the target was promoted and holds more: promoting it loses
// nothing, so the failover moves back to it.
func TestEmergencyOldPrimaryBackAndFresher(t *testing.T) {
	w := newWorld(t)
	primaryPartitioned(w)
	e := NewEmergency(w.env())
	if out, _ := run(t, w, e); out.Step != v1alpha1.StepFencing {
		t.Fatalf("want a wait at Fencing, got %+v", out)
	}
	w.sites["a"].up, w.sites["a"].writable = true, false // back, booted fenced
	if out, err := run(t, w, e); err != nil || !out.Completed {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	st := w.persisted.Status
	if st.ActiveSite != "a" || st.TopologyGeneration != 3 || !slices.Equal(w.writers(), []string{"a"}) || w.promotes["b"] != 0 {
		t.Fatalf("active %s generation %d writers %v", st.ActiveSite, st.TopologyGeneration, w.writers())
	}
}

func TestEmergencyUnknownStep(t *testing.T) {
	w := newWorld(t)
	w.persisted.Status.Failover = &v1alpha1.FailoverIntent{From: "a", To: "b", Generation: 2, Step: "Dancing"}
	if _, err := run(t, w, NewEmergency(w.env())); !errors.Is(err, ErrUnknownStep) {
		t.Fatalf("want ErrUnknownStep, got %v", err)
	}
}
