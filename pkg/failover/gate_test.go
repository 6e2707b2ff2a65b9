package failover

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/topology"
)

// gatedPass is w.pass() with the controller's rule in front of every step
// that makes a site writable: the snapshot is w.now when the pass observed.
func gatedPass(w *world, poll time.Duration) Pass {
	p := w.pass()
	observed := w.now
	p.MayMakeWritable = func(context.Context, string, time.Time) error {
		ok, why := topology.MayMakeWritable(topology.ActCheck{ObserveStarted: observed, ObservedAt: observed,
			Now: w.now, PollInterval: poll, ProbeTimeout: poll})
		if !ok {
			return fmt.Errorf("%w: %s", ErrMayNotMakeWritable, why)
		}
		return nil
	}
	return p
}

// TestPausedPassDoesNotPromote: the operator observes, fences the old
// primary by SQL, and is paused for longer than the poll interval before it
// would promote. Today it promotes on the old snapshot. It must wait for the
// next pass, which observes again, and promote then.
func TestPausedPassDoesNotPromote(t *testing.T) {
	const poll = time.Second
	w := newWorld(t)
	primarySeenDownButSQLAnswers(w)
	w.fencePause = 2 * poll
	e := NewEmergency(w.env())
	out, err := e.Advance(t.Context(), gatedPass(w, poll))
	if err != nil || out.Completed || w.promotes["b"] != 0 {
		t.Fatalf("paused pass: outcome %+v err %v promotes %d", out, err, w.promotes["b"])
	}
	if w.sites["b"].writable || MaybeWritable(&w.persisted.Status, "b") {
		t.Fatal("b touched on a stale snapshot")
	}
	w.fencePause = 0
	if out, err := e.Advance(t.Context(), gatedPass(w, poll)); err != nil || !out.Completed {
		t.Fatalf("fresh pass: outcome %+v err %v", out, err)
	}
	assertCompleted(t, w, "b", topology.ConfirmedBySQL)
}

func TestGateErrorIsTheSentinel(t *testing.T) {
	w := newWorld(t)
	p := gatedPass(w, time.Second)
	w.now = w.now.Add(3 * time.Second)
	if err := p.gate(t.Context(), "b"); !errors.Is(err, ErrMayNotMakeWritable) {
		t.Fatalf("want ErrMayNotMakeWritable, got %v", err)
	}
}
