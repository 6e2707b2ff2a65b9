package failover

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The ordered update switches the stale primary over through the same
// state machine, while status.phase says Updating: no annotation, every
// guard, zero loss.
func TestPlannedStartedByTheUpdate(t *testing.T) {
	w := newPWorld(t)
	w.persisted.Status.Phase = v1alpha1.GroupPhaseUpdating
	w.tick()
	if _, err := w.m.StartForUpdate(t.Context(), w.pass(), "b"); err != nil {
		t.Fatal(err)
	}
	if b := w.block(); b == nil || b.Origin != v1alpha1.OriginUpdate || b.Phase != v1alpha1.PhasePending {
		t.Fatalf("block %+v, want Pending of origin update", b)
	}
	w.run(40)
	w.assertSwitched(t)
	if at, _ := UpdateSwitchoverFailed(&w.persisted.Status); !at.IsZero() {
		t.Fatalf("a successful switchover reported failed at %s", at)
	}
}

// While a planned failover is asked for, the update does not start another.
func TestPlannedUpdateRefusedWhileRequested(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	w.tick()
	if _, err := w.m.StartForUpdate(t.Context(), w.pass(), "b"); !errors.Is(err, ErrPlannedBusy) {
		t.Fatalf("StartForUpdate with a request pending: %v, want ErrPlannedBusy", err)
	}
	if w.block() != nil {
		t.Fatalf("a block was written: %+v", w.block())
	}
}

// A switchover the update started that fails is reported with its reason,
// so that the update waits before asking again.
func TestPlannedUpdateFailureReported(t *testing.T) {
	w := newPWorld(t)
	w.persisted.Status.Phase = v1alpha1.GroupPhaseUpdating
	w.sites["b"].source = "" // not replicating: rejected at Validating
	w.tick()
	if _, err := w.m.StartForUpdate(t.Context(), w.pass(), "b"); err != nil {
		t.Fatal(err)
	}
	w.run(10)
	at, why := UpdateSwitchoverFailed(&w.persisted.Status)
	if at.IsZero() || why != v1alpha1.ReasonTargetUnhealthy {
		t.Fatalf("failure %s %q, want TargetUnhealthy", at, why)
	}
	w.assertNoFence(t)
}

// A stuck ordered update (a restarted site that never comes back) must not
// refuse planned failovers forever: within its progress deadline a request
// is refused with ConcurrentOperation and the time from which it no longer
// is; past it the request runs through every other check.
func TestPlannedDuringAStalledUpdate(t *testing.T) {
	cases := []struct {
		name    string
		ago     time.Duration // since the update's last step; < 0: unknown
		refused bool
	}{
		{"within the deadline: refused, saying until when", 9 * time.Minute, true},
		{"no step recorded (an older operator): refused", -1, true},
		{"stalled past the deadline: runs", 11 * time.Minute, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newPWorld(t)
			st := &w.persisted.Status
			st.Phase, st.Message = v1alpha1.GroupPhaseUpdating, "waiting for c to be Ready and caught up (1 of 2 left)"
			var since time.Time
			if c.ago >= 0 {
				since = w.now.Add(-c.ago)
				st.UpdateProgressTime = &metav1.Time{Time: since}
			}
			w.annotate("b")
			w.run(40)
			if !c.refused {
				w.assertSwitched(t)
				return
			}
			w.assertEnded(t, v1alpha1.PhaseFailed, v1alpha1.ReasonConcurrentOperation, v1alpha1.EventPlannedFailoverRejected)
			w.assertNoFence(t)
			b := w.block()
			if c.ago < 0 {
				if b.RetryAfter != nil {
					t.Fatalf("retryAfter %s without a recorded step", b.RetryAfter)
				}
				return
			}
			until := since.Add(10 * time.Minute)
			if b.RetryAfter == nil || !b.RetryAfter.Time.Equal(until.Truncate(time.Second)) ||
				!strings.Contains(b.Message, "progressDeadline") {
				t.Fatalf("block %+v, want retryAfter %s and the deadline named", b, until)
			}
		})
	}
}

func TestUpdateDeadline(t *testing.T) {
	g := &v1alpha1.MysqlFailoverGroup{}
	if got := UpdateDeadline(g); got != 10*time.Minute {
		t.Fatalf("default %s, want 10m", got)
	}
	g.Spec.Updates.ProgressDeadline = &metav1.Duration{Duration: 2 * time.Minute}
	if got := UpdateDeadline(g); got != 2*time.Minute {
		t.Fatalf("configured %s, want 2m", got)
	}
	g.Spec.Instance.StartDelay = metav1.Duration{Duration: 3 * time.Minute}
	g.Spec.Instance.StopDelay = metav1.Duration{Duration: time.Minute}
	if got := UpdateDeadline(g); got != 4*time.Minute {
		t.Fatalf("with a long start and stop %s, want 4m", got)
	}
}
