package failover

import (
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// An operator that dies at any status write (the write lost, memory gone)
// and restarts finishes the request as if nothing happened: one writer at
// every pass, nothing lost, the same end.
func TestPlannedCrashAtEveryWrite(t *testing.T) {
	scenarios := []struct {
		name  string
		setup func(w *pworld)
		check func(t *testing.T, w *pworld)
	}{
		{"switchover", func(w *pworld) { w.annotate("b") }, func(t *testing.T, w *pworld) { w.assertSwitched(t) }},
		{"drain timeout", func(w *pworld) { w.kills = []int{2}; w.annotate("b") },
			func(t *testing.T, w *pworld) { w.assertSwitched(t) }},
		{"lag timeout", func(w *pworld) { w.lagging["b"] = true; w.annotate("b:maxLagWait=1s") },
			func(t *testing.T, w *pworld) {
				w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonLagTimeout, v1alpha1.EventPlannedFailoverFailed)
				w.assertNoFence(t)
			}},
		{"deferred", func(w *pworld) {
			w.persisted.Spec.PlannedFailover.OnCooldown = v1alpha1.CooldownDefer
			lastFailover(w, v1alpha1.KindEmergency, 59*time.Second)
			w.annotate("b")
		}, func(t *testing.T, w *pworld) { w.assertSwitched(t) }},
		{"rejected", func(w *pworld) { w.annotate("zz") }, func(t *testing.T, w *pworld) {
			w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonUnknownSite, v1alpha1.EventPlannedFailoverRejected)
			w.assertNoFence(t)
		}},
	}
	for _, sc := range scenarios {
		clean := newPWorld(t)
		sc.setup(clean)
		clean.run(300)
		sc.check(t, clean)
		for n := 1; n <= clean.persists; n++ {
			t.Run(fmt.Sprintf("%s/crash at write %d of %d", sc.name, n, clean.persists), func(t *testing.T) {
				w := newPWorld(t)
				sc.setup(w)
				w.failAt = n
				for i := 0; i < 300 && w.persists < n; i++ {
					out, _ := w.step()
					w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
				}
				if w.persists < n {
					t.Fatalf("never reached write %d", n)
				}
				w.failAt = 0
				w.restart()
				w.now = w.now.Add(time.Second)
				w.run(300)
				sc.check(t, w)
				if w.maxWriters > 1 {
					t.Fatalf("%d writers at once", w.maxWriters)
				}
			})
		}
	}
}
