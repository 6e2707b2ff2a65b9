package failover

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// runAsLoop makes one pass the way the poll loop acts on it: extra writers
// (and sites that may write) are fenced by SQL first, as
// pkg/controller's fenceExtras does; otherwise the sequence advances.
func runAsLoop(t *testing.T, w *world, e *Emergency) (Outcome, error) {
	t.Helper()
	p := w.pass()
	if p.Decision.Kind == topology.KindFenceExtraWriters {
		for _, site := range p.Decision.Fence {
			if w.Fence(t.Context(), site) == nil {
				RecordFenced(&p.Group.Status, site)
			}
		}
		return Outcome{Step: stepOf(&p.Group.Status)}, w.PersistStatus(t.Context(), p.Group)
	}
	return e.Advance(t.Context(), p)
}

// TestAmbiguousPromotionIsFencedBeforeRetarget: three sites. a is lost and
// confirmed fenced; b is the target. b's Promote times out but takes effect,
// and the poll's probes still show b read-only. Then c turns out fresher,
// and the failover moves to c. c must not become writable while b may
// write: b is fenced (and that confirmed) first.
func TestAmbiguousPromotionIsFencedBeforeRetarget(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	primaryCrashed(w)
	w.now = t0.Add(3 * time.Second) // past a's lease deadline
	w.sites["b"].promoteTimesOut = true
	w.sites["b"].seenReadOnly = true
	e := NewEmergency(w.env())
	if _, err := runAsLoop(t, w, e); !errors.Is(err, ErrPromote) {
		t.Fatalf("first pass: want ErrPromote, got %v", err)
	}
	if !w.sites["b"].writable {
		t.Fatal("the fake promotion should have taken effect")
	}
	if !MaybeWritable(&w.persisted.Status, "b") {
		t.Fatal("a promotion that timed out is not recorded maybe-writable")
	}
	// c received more than b: the failover must move to c.
	w.sites["c"].executed = gtid.MustParseSet(uuidA + ":1-10")
	w.sites["b"].promoteTimesOut = false
	for i := 0; i < 6; i++ {
		w.now = w.now.Add(time.Second)
		if _, err := runAsLoop(t, w, e); err != nil {
			t.Logf("pass %d: %v", i, err)
		}
		if len(w.twoWriters) > 0 {
			t.Fatalf("pass %d: a promotion left writers %v (steps %v)", i, w.twoWriters, w.steps)
		}
	}
	st := w.persisted.Status
	if st.ActiveSite != "c" || st.Failover != nil || !slices.Equal(w.writers(), []string{"c"}) {
		t.Fatalf("want c the only writer and the failover done: active %s failover %+v writers %v",
			st.ActiveSite, st.Failover, w.writers())
	}
	if MaybeWritable(&st, "b") || !HeldReadOnly(&st, "b") {
		t.Fatalf("b should be fenced and held read-only: %+v", st.Sites)
	}
	if !slices.Contains(w.events, v1alpha1.EventMaybeWritable) {
		t.Fatalf("events %v: no %s", w.events, v1alpha1.EventMaybeWritable)
	}
}

// TestRetargetRecordsTheAbandonedTarget: as above, b's promotion timed out
// but took effect, and the failover moves to c. The new intent records b
// as abandoned, so that what b wrote until its fence, and c may hold, is
// not judged outside the history while the failover is in flight (seeds
// 11935 and 11990 of the real operator's runs, truthful-divergence).
func TestRetargetRecordsTheAbandonedTarget(t *testing.T) {
	w := newWorld(t)
	w.addSite("c")
	primaryCrashed(w)
	w.now = t0.Add(3 * time.Second)
	w.sites["b"].promoteTimesOut = true
	w.sites["b"].seenReadOnly = true
	e := NewEmergency(w.env())
	if _, err := runAsLoop(t, w, e); !errors.Is(err, ErrPromote) {
		t.Fatalf("first pass: want ErrPromote, got %v", err)
	}
	w.sites["c"].executed = gtid.MustParseSet(uuidA + ":1-10")
	w.sites["b"].promoteTimesOut = false
	for i := 0; i < 6; i++ {
		w.now = w.now.Add(time.Second)
		_, _ = runAsLoop(t, w, e)
		if it := w.persisted.Status.Failover; it != nil && it.To == "c" {
			if !slices.Equal(it.Abandoned, []string{"b"}) {
				t.Fatalf("retargeted intent %+v: abandoned %v, want [b]", it, it.Abandoned)
			}
			return
		}
	}
	t.Fatalf("the failover never moved to c: %+v", w.persisted.Status.Failover)
}

// TestPlannedWaitsForAMaybeWritableSite: a planned failover never promotes
// its target while a third site may be writable (its earlier promotion
// timed out and its probes still show read-only).
func TestPlannedWaitsForAMaybeWritableSite(t *testing.T) {
	w := newPWorld(t)
	w.addThird(v1alpha1.RolePrimaryCandidate)
	w.sites["c"].writable, w.sites["c"].seenReadOnly = true, true
	MarkMaybeWritable(&w.persisted.Status, "c", errors.New("promote c: context deadline exceeded"))
	w.annotate("b")
	w.run(60)
	if w.promotes["b"] != 0 || len(w.twoWriters) > 0 {
		t.Fatalf("b promoted %d times while c may write (writers at promotion %v)", w.promotes["b"], w.twoWriters)
	}
}
