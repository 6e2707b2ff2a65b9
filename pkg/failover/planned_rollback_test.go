package failover

import (
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// untilPhase steps until the block reaches phase (at most limit passes).
func (w *pworld) untilPhase(phase v1alpha1.PlannedFailoverPhase, limit int) {
	w.t.Helper()
	for range limit {
		if b := w.block(); b != nil && b.Phase == phase {
			return
		}
		if _, err := w.step(); err != nil {
			w.t.Fatalf("pass: %v", err)
		}
		w.now = w.now.Add(w.tickEvery())
	}
	w.t.Fatalf("phase %s not reached (phases %v)", phase, w.phases)
}

func (w *pworld) tickEvery() time.Duration { return 20 * time.Millisecond }

// Issue 13, path 2: a target named active that no longer holds the fenced
// set ended ExecuteFailed with the source fenced and the target still named
// active, so the next pass re-asserted the target without the source's
// writes. It must roll back: the source is named active again and unfenced.
func TestPlannedTargetLostTheFencedSetRollsBack(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := map[bool]string{false: "in one run", true: "across an operator restart"}[restart]
		t.Run(name, func(t *testing.T) {
			w := newPWorld(t)
			w.annotate("b")
			w.untilPhase(v1alpha1.PhasePromoting, 50)
			if w.persisted.Status.ActiveSite != "b" || w.persisted.Status.TopologyGeneration != 2 {
				t.Fatalf("status at Promoting: %+v", w.persisted.Status)
			}
			// b loses the tail it had applied (say its disk was restored) and stops replicating.
			w.sites["b"].executed = gtid.MustParseSet(uuidA + ":1-8")
			w.lagging["b"] = true
			if restart {
				w.failAt = w.persists + 2 // the write that names a again lands, the next one does not
				w.step()
				w.failAt = 0
				if st := w.persisted.Status; st.ActiveSite != "a" || st.PlannedFailover.Phase != v1alpha1.PhasePromoting {
					t.Fatalf("before the restart: active %q phase %s", st.ActiveSite, st.PlannedFailover.Phase)
				}
				w.restart()
			}
			w.run(100)
			w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonTargetLacksFencedSet, v1alpha1.EventPlannedFailoverFailed)
			st := w.persisted.Status
			if got := w.writers(); !slices.Equal(got, []string{"a"}) || w.maxWriters > 1 || w.labels != "a" || w.dns != "a" {
				t.Fatalf("writers %v (max %d) labels %q dns %q", got, w.maxWriters, w.labels, w.dns)
			}
			if st.ActiveSite != "a" || st.TopologyGeneration != 3 || st.LastFailover != nil || HeldReadOnly(&st, "a") {
				t.Fatalf("status after the rollback: %+v", st)
			}
			if w.world.promotes["b"] > 0 || len(w.lossAt) > 0 {
				t.Fatalf("b promoted %d times, promotions lacking %v", w.world.promotes["b"], w.lossAt)
			}
			if !HeldReadOnly(&st, "b") {
				t.Fatal("b is not held read-only after the rollback")
			}
			// The loop carries on with a as the writer: nothing to fail over or re-assert.
			if d := w.pass().Decision; d.Kind != topology.KindHealthy && d.Kind != topology.KindDegraded {
				t.Fatalf("decision after the rollback: %s (%s)", d, d.Message)
			}
		})
	}
}

// Review of issue 13: the target was validated when the request started,
// and never again. A target found diverged later (an errant write on the
// replica, marked by the operator mid-flight), or holding transactions the
// fenced source never had, must not be promoted: the planned failover
// rolls back and the source is named active again.
func TestPlannedTargetDivergedMidFlightRollsBack(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(w *pworld)
	}{
		{"marked diverged", func(w *pworld) { w.persisted.Status.Sites[1].DivergentGtid = uuidB + ":1" }},
		{"holds an errant transaction", func(w *pworld) {
			w.sites["b"].executed = w.sites["b"].executed.Union(gtid.MustParseSet(uuidB + ":1"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			w.annotate("b")
			w.untilPhase(v1alpha1.PhasePromoting, 50)
			c.break_(w)
			w.run(100)
			st := w.persisted.Status
			if w.world.promotes["b"] > 0 {
				t.Fatalf("b promoted %d times", w.world.promotes["b"])
			}
			if got := w.writers(); !slices.Equal(got, []string{"a"}) || w.maxWriters > 1 {
				t.Fatalf("writers %v (max %d)", got, w.maxWriters)
			}
			if st.ActiveSite != "a" || st.PlannedFailover.Phase != v1alpha1.PhaseFailed {
				t.Fatalf("status after the rollback: active %q phase %s", st.ActiveSite, st.PlannedFailover.Phase)
			}
		})
	}
}
