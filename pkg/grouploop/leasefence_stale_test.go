package grouploop

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// Former leader L1 claims b, arms (clears its own mark), promotes, pauses.
// New leader L2 re-claims b (marks already set) under a write hold: mark stays.
// L1's ordinary end-of-pass write lands afterwards.
func TestStaleArmClearKeepsANewerClaimsMark(t *testing.T) {
	g0 := testGroup("orders", "b", 5)
	g0.Status.Sites = []v1alpha1.SiteStatus{{Name: "a"}, {Name: "b"}}
	cl := fakeStatusClient(t, g0)
	old := &statusPatcher{c: cl, reader: cl}
	og := readGroup(t, cl)
	old.reset(og)
	if _, err := failover.Claim(t.Context(), old, og, "b"); err != nil {
		t.Fatal(err)
	}
	failover.ProveLeaseFence(&og.Status, "b") // PrepareWritable: armed
	failover.RecordWritable(&og.Status, "b")  // Promote landed; L1 pauses here

	leader := &statusPatcher{c: cl, reader: cl}
	lg := readGroup(t, cl)
	leader.reset(lg)
	if _, err := failover.Claim(t.Context(), leader, lg, "b"); err != nil {
		t.Fatal(err)
	}
	failover.RecordWritable(&lg.Status, "b") // arm held off: mark stays
	if err := leader.PersistStatus(t.Context(), lg); err != nil {
		t.Fatal(err)
	}
	og.Status.ObservedGeneration++
	if err := old.PersistStatus(t.Context(), og); err != nil && !errors.Is(err, ErrAuthorityMoved) {
		t.Fatal(err)
	}
	if !failover.LeaseFenceUnproven(&readGroup(t, cl).Status, "b") {
		t.Fatal("former leader's ordinary write erased the newer claim's lease-fence mark on b")
	}
}
