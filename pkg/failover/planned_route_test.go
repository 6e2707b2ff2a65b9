package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestPlannedMovesClientsBeforeRecording: once the target is writable, the
// -primary role moves to it before the promotion is recorded, so clients
// wait for one status write less. An operator that dies right after the
// promotion statement, its record lost, has already sent clients to the
// writable target (and to nothing else); after a restart the request ends
// as usual.
func TestPlannedMovesClientsBeforeRecording(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("the target was never promoted")
		}
		b := w.block()
		armed := b != nil && b.Phase == v1alpha1.PhasePromoting && w.persisted.Status.ActiveSite == "b"
		if armed {
			w.failAt = w.persists + 2 // the claim goes through, the promotion's record is lost
		}
		out, _ := w.step()
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
		if w.sites["b"].writable {
			break
		}
	}
	if w.labels != "b" {
		t.Fatalf("the promotion's record was lost with the role labels on %q, want the writable target b", w.labels)
	}
	if w.block().TargetGtidAtPromotion != "" {
		t.Fatalf("the promotion was recorded: the crash came too late to show anything")
	}
	w.failAt = 0
	w.restart()
	w.now = w.now.Add(time.Second)
	w.run(300)
	w.assertSwitched(t)
	if w.maxWriters > 1 {
		t.Fatalf("%d writers at once", w.maxWriters)
	}
}

// TestPlannedDeposedMidPromoteMovesNoClients: the operator passes its
// checks, claims b and sends the Promote statement, and is paused past its
// leadership meanwhile; a new leader rolls the failover back, and the
// paused process's promotion record then fails. The early label move must
// ask the gate again: a deposed process must not send every -primary client
// to b, which the new leader fenced.
func TestPlannedDeposedMidPromoteMovesNoClients(t *testing.T) {
	w := newPWorld(t)
	w.annotate("b")
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("the target was never promoted")
		}
		w.tick()
		b := w.block()
		p := w.pass()
		if b != nil && b.Phase == v1alpha1.PhasePromoting && w.persisted.Status.ActiveSite == "b" {
			calls := 0
			p.MayMakeWritable = func(context.Context, string, time.Time) error {
				if calls++; calls > 1 {
					return errors.New("deposed: the leader-election lock is held by another process")
				}
				return nil
			}
			w.failAt = w.persists + 2 // the claim goes through, the promotion's record is refused
		}
		out, _ := w.m.Step(t.Context(), p)
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
		if w.sites["b"].writable {
			break
		}
	}
	if w.labels == "b" {
		t.Fatal("a deposed operator moved the -primary role to b before recording the promotion")
	}
}
