package grouploop

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/pkg/failover"
)

// TestWithdrawKeepsNewLeadersClaim: a paused operator (old) claims b,
// then stalls in PrepareWritable. The new leader reads the group (b marked
// by old's claim), claims b itself (exclusive, lands: nothing changed but
// the resourceVersion) and sends the promote, whose outcome is unknown: the
// mark must stay. old resumes, its PrepareWritable fails, and it withdraws
// its claim through PersistStatus: the conflict re-reads, authorityMoved
// sees no newly set mark (b was marked in old's base too) and old's status
// is written on top, clearing b's mark, so the new leader may promote
// another site while b may be writable. The withdrawal must not land over
// another writer (PersistStatusExclusive: a conflict only costs time).
func TestWithdrawKeepsNewLeadersClaim(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	old := &statusPatcher{c: cl, reader: cl}
	og := readGroup(t, cl)
	old.reset(og)
	c, err := failover.Claim(t.Context(), old, og, "b")
	if err != nil {
		t.Fatal(err)
	}

	leader := &statusPatcher{c: cl, reader: cl}
	lg := readGroup(t, cl)
	leader.reset(lg)
	if _, err := failover.Claim(t.Context(), leader, lg, "b"); err != nil {
		t.Fatal(err)
	}
	// The promote statement timed out: the mark stays (MarkMaybeWritable).
	failover.MarkMaybeWritable(&lg.Status, "b", errors.New("promote: timeout"))
	if err := leader.PersistStatus(t.Context(), lg); err != nil {
		t.Fatal(err)
	}

	if err := failover.WithdrawClaim(t.Context(), old, og, c); err == nil {
		t.Fatal("the paused operator's withdrawal landed over the new leader's writes")
	}
	if !failover.MaybeWritable(&readGroup(t, cl).Status, "b") {
		t.Fatal("the paused operator's withdrawal erased the new leader's claim on b")
	}
	// Put back in the paused operator's copy too: no later write of its
	// pass clears the mark.
	if !failover.MaybeWritable(&og.Status, "b") {
		t.Fatal("the refused withdrawal left b's mark cleared in the paused operator's status")
	}
}
