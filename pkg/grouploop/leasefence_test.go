package grouploop

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestProveLeaseFencesKeepsMarkWhileMaybeWritable (review of f37434c):
// a claim's statement whose outcome is unknown (maybeWritable) "may have
// run after the client gave up, or be running still" (maybewritable.go).
// A probe that sees the site read-only says nothing about it: the
// statement may land after the probe. Same for a second operator process
// (a deposed leader's pass) whose probe ran between another process's
// claim and that process's statement. Clearing the lease-fence mark on such
// a probe gives the site a lease deadline again, while the step's arm was
// refused under the hold and nothing proves an event.
func TestProveLeaseFencesKeepsMarkWhileMaybeWritable(t *testing.T) {
	g := testGroup("orders", "a", 5)
	g.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", MaybeWritable: true, LeaseFenceUnproven: true}}
	l := &Loop{obs: map[string]observation{
		"a": {status: mysql.Status{}},
		"b": {status: mysql.Status{ReadOnly: true, SuperReadOnly: true}},
	}}
	l.proveLeaseFences(t.Context(), failover.Pass{Group: g})
	if !failover.LeaseFenceUnproven(&g.Status, "b") {
		t.Fatal("a read-only probe of a maybe-writable site cleared its lease-fence mark: " +
			"the claim's statement may still land, writable with no event proven")
	}
}

// TestStaleWriteKeepsClaimsLeaseFenceMark (review of f37434c): a site
// already marked maybe-writable (an earlier promotion timed out) is claimed
// again by the leader; the claim sets leaseFenceUnproven (and clears
// fenced). A paused former leader, whose base predates that claim, writes
// its status: the conflict re-reads, authorityMoved sees no newly set
// maybeWritable mark (b was marked in its base too) and its status lands on
// top, erasing the claim's lease-fence mark (and putting back fenced). If
// the leader then dies before its next write, nothing remembers that b's
// event was never proven.
func TestStaleWriteKeepsClaimsLeaseFenceMark(t *testing.T) {
	g0 := testGroup("orders", "a", 5)
	g0.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", MaybeWritable: true}}
	cl := fakeStatusClient(t, g0)
	old := &statusPatcher{c: cl, reader: cl}
	og := readGroup(t, cl)
	old.reset(og)

	leader := &statusPatcher{c: cl, reader: cl}
	lg := readGroup(t, cl)
	leader.reset(lg)
	if _, err := failover.Claim(t.Context(), leader, lg, "b"); err != nil {
		t.Fatal(err)
	}
	if !failover.LeaseFenceUnproven(&readGroup(t, cl).Status, "b") {
		t.Fatal("the claim did not persist the mark")
	}

	og.Status.ObservedGeneration++ // any ordinary write of the paused pass
	err := old.PersistStatus(t.Context(), og)
	if err != nil && !errors.Is(err, ErrAuthorityMoved) {
		t.Fatal(err)
	}
	if !failover.LeaseFenceUnproven(&readGroup(t, cl).Status, "b") {
		t.Fatal("a stale operator's write erased the leader's claim's lease-fence mark on b")
	}
}

// TestStaleProofKeepsANewerClaimsMark (read-through of the lease-fence
// mark): a former leader A read b marked unproven and probed it read-only.
// Meanwhile the new leader B claimed b again (the mark stays set, so
// nothing is newly marked) and made it writable under a write hold. A's
// proof by observation, written as an ordinary status write, landed on
// top and cleared B's mark: b's lease deadline counted again with no event
// proven. A proof is written exclusively, as a claim is; refused, it is
// taken back.
func TestStaleProofKeepsANewerClaimsMark(t *testing.T) {
	g0 := testGroup("orders", "a", 5)
	g0.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b", LeaseFenceUnproven: true}}
	cl := fakeStatusClient(t, g0)
	old := &statusPatcher{c: cl, reader: cl}
	og := readGroup(t, cl)
	old.reset(og)

	leader := &statusPatcher{c: cl, reader: cl}
	lg := readGroup(t, cl)
	leader.reset(lg)
	if _, err := failover.Claim(t.Context(), leader, lg, "b"); err != nil {
		t.Fatal(err)
	}
	failover.RecordWritable(&lg.Status, "b") // B's statement landed
	if err := leader.PersistStatus(t.Context(), lg); err != nil {
		t.Fatal(err)
	}

	l := &Loop{patcher: old, obs: map[string]observation{
		"a": {status: mysql.Status{}},
		"b": {status: mysql.Status{ReadOnly: true, SuperReadOnly: true}}, // A's probe, before B's statement
	}}
	l.proveLeaseFences(t.Context(), failover.Pass{Group: og})
	og.Status.ObservedGeneration++ // the rest of A's pass
	if err := old.PersistStatus(t.Context(), og); err != nil && !errors.Is(err, ErrAuthorityMoved) {
		t.Fatal(err)
	}
	if !failover.LeaseFenceUnproven(&readGroup(t, cl).Status, "b") {
		t.Fatal("a former leader's proof by a stale probe cleared the new leader's claim's mark on b")
	}
}
