package failover

import (
	"errors"
	"testing"

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
