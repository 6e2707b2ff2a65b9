package reclone_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// phases asks q's ID for each phase in turn, each until it is done and
// e's work ended.
func phases(t *testing.T, c *reclone.Client, e *reclone.Executor, q reclone.Request, ps ...v1alpha1.RecoveryPhase) reclone.Answer {
	t.Helper()
	var a reclone.Answer
	for _, p := range ps {
		q.Phase = p
		a = outcome(t, c, q)
		if !a.Done {
			t.Fatalf("%s %s: %+v", q.ID, p, a)
		}
		e.Wait()
	}
	return a
}

// outcome asks q until it is done or failed.
func outcome(t *testing.T, c *reclone.Client, q reclone.Request) reclone.Answer {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err := c.Do(t.Context(), "shop", "orders", "pdx", q)
		if err != nil {
			t.Fatalf("%s %s: %v", q.ID, q.Phase, err)
		}
		if a.Done || a.Failed != "" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("no outcome: %+v", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	accA = time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)
	accB = time.Date(2026, 11, 24, 23, 5, 0, 0, time.UTC)
	// recloneA is an earlier reclone of pdx than recloneB.
	recloneA = reclone.Request{ID: "pdx:confirm=orders@20261124T220000Z", Donor: "iad", DivergentGtid: "0-3:1",
		Generation: 5, Accepted: accA}
	recloneB = reclone.Request{ID: "pdx:confirm=orders@20261124T230500Z", Donor: "iad", DivergentGtid: "0-3:1",
		Generation: 5, Accepted: accB}
	toCloned = []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData, v1alpha1.RecoveryCloning}
)

// TestLateRequestOfAnEarlierRecloneIsRefused: reclone B has cloned the
// site (as after Rejoined, the site is a replica again). Requests of an
// earlier reclone A of the same site (the same generation: a reclone does
// not bump it), late, replayed or sent by a deposed operator, are refused,
// whatever their phase: nothing is stopped or fetched again, and B's
// CatchingUp still answers Done.
func TestLateRequestOfAnEarlierRecloneIsRefused(t *testing.T) {
	for _, p := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData,
		v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp} {
		t.Run(string(p), func(t *testing.T) {
			c, m, fetches, _, e := siteBed(t)
			phases(t, c, e, recloneB, toCloned...)
			e.Wait()
			stops, fetched := m.stops, *fetches
			late := recloneA
			late.Phase = p
			_, lateErr := c.Do(t.Context(), "shop", "orders", "pdx", late)
			e.Wait()
			if lateErr == nil {
				t.Errorf("a request of an earlier reclone was accepted while reclone B holds the site")
			}
			if m.stops != stops || *fetches != fetched {
				t.Errorf("the late request stopped mysqld (%d more) and fetched (%d more)", m.stops-stops, *fetches-fetched)
			}
			bc := recloneB
			bc.Phase = v1alpha1.RecoveryCatchingUp
			if a, err := c.Do(t.Context(), "shop", "orders", "pdx", bc); err != nil || !a.Done {
				t.Errorf("reclone B's CatchingUp no longer answers Done: %+v, %v", a, err)
			}
		})
	}
}

// TestReplayOfAFinishedRecloneIsRefused: reclone A ran to its end, then
// B was requested; a replay of A's whole sequence is refused from its
// first request, even when the replayed ID claims a later acceptance.
func TestReplayOfAFinishedRecloneIsRefused(t *testing.T) {
	c, m, fetches, _, e := siteBed(t)
	phases(t, c, e, recloneA, toCloned...)
	phases(t, c, e, recloneB, v1alpha1.RecoveryRequested)
	e.Wait()
	stops, fetched := m.stops, *fetches
	replay := recloneA
	replay.Accepted = accB.Add(time.Hour)
	for _, p := range toCloned {
		replay.Phase = p
		if _, err := c.Do(t.Context(), "shop", "orders", "pdx", replay); err == nil {
			t.Errorf("replayed %s of a finished reclone accepted", p)
		}
	}
	e.Wait()
	if m.stops != stops || *fetches != fetched {
		t.Errorf("the replay stopped mysqld (%d more) and fetched (%d more)", m.stops-stops, *fetches-fetched)
	}
}

// TestCloningNeedsItsPreservingData: a reclone's Cloning is refused unless
// the site recorded its ID with Requested and finished its PreservingData.
func TestCloningNeedsItsPreservingData(t *testing.T) {
	c, m, _, _, e := siteBed(t)
	q := recloneB
	q.Phase = v1alpha1.RecoveryCloning
	if _, err := c.Do(t.Context(), "shop", "orders", "pdx", q); err == nil {
		t.Errorf("Cloning of a reclone never requested was accepted")
	}
	phases(t, c, e, recloneB, v1alpha1.RecoveryRequested)
	if _, err := c.Do(t.Context(), "shop", "orders", "pdx", q); err == nil {
		t.Errorf("Cloning before PreservingData was accepted")
	}
	e.Wait()
	if m.stops != 0 {
		t.Errorf("mysqld stopped %d times", m.stops)
	}
	if a := phases(t, c, e, recloneB, v1alpha1.RecoveryPreservingData, v1alpha1.RecoveryCloning); a.Position != "0-1-9" {
		t.Errorf("Cloning after PreservingData: %+v", a)
	}
}

// TestALaterRecloneTakesOverAnUnfinishedOne: the operator gave up reclone
// A after its PreservingData (failed or cancelled it); a new reclone B's
// Requested is accepted, A's folder is still reported by the state, and
// A's further requests are refused.
func TestALaterRecloneTakesOverAnUnfinishedOne(t *testing.T) {
	c, _, _, _, e := siteBed(t)
	a := phases(t, c, e, recloneA, v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData)
	phases(t, c, e, recloneB, v1alpha1.RecoveryRequested)
	q := recloneA
	q.Phase = v1alpha1.RecoveryCloning
	if _, err := c.Do(t.Context(), "shop", "orders", "pdx", q); err == nil {
		t.Errorf("the superseded reclone's Cloning was accepted")
	}
	e.Wait()
	b := phases(t, c, e, recloneB, v1alpha1.RecoveryPreservingData)
	if b.PreservedAt == a.PreservedAt || b.PreservedAt == "" {
		t.Errorf("B preserves into %q, A into %q: one folder per reclone", b.PreservedAt, a.PreservedAt)
	}
}
