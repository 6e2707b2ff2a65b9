package grouploop

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// TestClaimRefusedAfterAnotherWriter: a pass claims a site (persists it
// maybe-writable, exclusively) before making it writable. When another
// operator process wrote the group after the pass read it, the claim is
// refused and writes nothing, whether or not it changes anything.
func TestClaimRefusedAfterAnotherWriter(t *testing.T) {
	cases := []struct {
		name  string
		stale func(st *v1alpha1.MysqlFailoverGroupStatus)
	}{
		{"a claim that changes the status", func(*v1alpha1.MysqlFailoverGroupStatus) {}},
		{"a claim that changes nothing (the mark is there already)", func(st *v1alpha1.MysqlFailoverGroupStatus) {
			st.Sites = []v1alpha1.SiteStatus{{Name: "a", MaybeWritable: true}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 5)
			c.stale(&g.Status)
			cl := fakeStatusClient(t, g)
			old := &statusPatcher{c: cl, reader: cl}
			stale := readGroup(t, cl)
			old.reset(stale)

			other := readGroup(t, cl)
			other.Status.ObservedGeneration = 9
			if err := cl.Status().Update(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			_, err := failover.Claim(t.Context(), old, stale, "a")
			if !errors.Is(err, failover.ErrClaim) || !errors.Is(err, ErrAuthorityMoved) {
				t.Fatalf("want ErrClaim and ErrAuthorityMoved, got %v", err)
			}
			if got := readGroup(t, cl).Status; got.ObservedGeneration != 9 {
				t.Fatalf("the other writer's status was overwritten: %+v", got)
			}
			if err := old.PersistStatus(t.Context(), stale); !errors.Is(err, ErrAuthorityMoved) {
				t.Fatalf("the rest of the pass: want ErrAuthorityMoved, got %v", err)
			}
		})
	}
}

// TestClaimAfterOwnWrites: a pass's own writes move the lock with them; a
// claim on top of them lands.
func TestClaimAfterOwnWrites(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	p := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	p.reset(g)
	g.Status.ObservedGeneration = 3
	if err := p.PersistStatus(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if _, err := failover.Claim(t.Context(), p, g, "a"); err != nil {
		t.Fatal(err)
	}
	if !failover.MaybeWritable(&readGroup(t, cl).Status, "a") {
		t.Fatal("the claim was not written")
	}
}

// TestClaimRefusedAfterWritingOnTop: a pass whose earlier write met
// another writer's change and wrote again on top no longer holds the
// status it decided on: its claim is refused.
func TestClaimRefusedAfterWritingOnTop(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	p := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	p.reset(g)
	other := readGroup(t, cl)
	other.Status.ObservedGeneration = 9
	if err := cl.Status().Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	g.Status.Conditions = nil
	g.Status.ObservedGeneration = 4
	if err := p.PersistStatus(t.Context(), g); err != nil {
		t.Fatalf("an unrelated change is written on top: %v", err)
	}
	if _, err := failover.Claim(t.Context(), p, g, "a"); !errors.Is(err, ErrAuthorityMoved) {
		t.Fatalf("want ErrAuthorityMoved, got %v", err)
	}
	if failover.MaybeWritable(&readGroup(t, cl).Status, "a") {
		t.Fatal("the refused claim was written")
	}
}

// TestWriteKeepsAnotherWritersClaim: a deposed leader's claim landed after
// the new leader read the group. The new leader's next ordinary write
// conflicts; it must not write its status (without the mark) on top, or it
// would then promote another site while the claimed one may be made
// writable. It is abandoned, and the next pass reads the mark.
func TestWriteKeepsAnotherWritersClaim(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	leader := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	leader.reset(g)

	deposed := &statusPatcher{c: cl, reader: cl}
	dg := readGroup(t, cl)
	deposed.reset(dg)
	if _, err := failover.Claim(t.Context(), deposed, dg, "a"); err != nil {
		t.Fatal(err)
	}
	failover.RecordFenced(&g.Status, "b")
	if err := leader.PersistStatus(t.Context(), g); !errors.Is(err, ErrAuthorityMoved) {
		t.Fatalf("want ErrAuthorityMoved, got %v", err)
	}
	if !failover.MaybeWritable(&readGroup(t, cl).Status, "a") {
		t.Fatal("the deposed leader's claim was overwritten")
	}
}

// Review of issue 13: a conflict retry re-applied this writer's whole
// status over another writer's divergence mark, so the diverged site could
// be promoted or rejoined. A site newly marked diverged is the authority
// moving: the write is abandoned and the mark stays.
func TestWriteKeepsAnotherWritersDivergenceMark(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	stale := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	stale.reset(g)

	other := &statusPatcher{c: cl, reader: cl}
	og := readGroup(t, cl)
	other.reset(og)
	failover.SiteRecord(&og.Status, "b").DivergentGtid = "0-2:5"
	if err := other.PersistStatus(t.Context(), og); err != nil {
		t.Fatal(err)
	}
	failover.RecordFenced(&g.Status, "a")
	if err := stale.PersistStatus(t.Context(), g); !errors.Is(err, ErrAuthorityMoved) {
		t.Fatalf("want ErrAuthorityMoved, got %v", err)
	}
	if got := failover.SiteRecord(&readGroup(t, cl).Status, "b").DivergentGtid; got != "0-2:5" {
		t.Fatalf("b's divergence mark is %q after the stale write", got)
	}
}

// Review of this session's claim retry: another operator process's status
// writes that end where they began (a re-assert marks its site
// maybe-writable, then clears the mark) leave the same status under a new
// resourceVersion. Equal content is not "nobody wrote": the claim must be
// refused, as after any conflict, or a paused former leader promotes on a
// decision the new leader's writes made stale.
func TestClaimRefusedAfterAStatusChangedAndChangedBack(t *testing.T) {
	start := testGroup("orders", "a", 5)
	start.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b"}}
	cl := fakeStatusClient(t, start)
	p := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	p.reset(g)

	for _, mark := range []bool{true, false} {
		other := readGroup(t, cl)
		failover.SiteRecord(&other.Status, "a").MaybeWritable = mark
		if err := cl.Status().Update(t.Context(), other); err != nil {
			t.Fatal(err)
		}
	}
	_, err := failover.Claim(t.Context(), p, g, "b")
	if !errors.Is(err, failover.ErrClaim) || !errors.Is(err, ErrAuthorityMoved) {
		t.Fatalf("want ErrClaim and ErrAuthorityMoved, got %v", err)
	}
	if failover.MaybeWritable(&readGroup(t, cl).Status, "b") {
		t.Fatal("the claim landed on top of another writer")
	}
}
