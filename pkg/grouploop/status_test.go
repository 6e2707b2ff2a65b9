package grouploop

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
)

func fakeStatusClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.MysqlFailoverGroup{}).Build()
}

func readGroup(t *testing.T, c client.Client) *v1alpha1.MysqlFailoverGroup {
	t.Helper()
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "shop", Name: "orders"}, g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStatusPatcherNeverLowersTheGeneration: a former leader, paused
// between its read and its write, must not write its stale status over
// the authority the new leader moved on. Before, a conflict re-read the
// object and re-applied the whole stale status: generation 6 went back to 5.
func TestStatusPatcherNeverLowersTheGeneration(t *testing.T) {
	cases := []struct {
		name string
		move func(st *v1alpha1.MysqlFailoverGroupStatus)
	}{
		{"the new leader failed over (generation and active site)", func(st *v1alpha1.MysqlFailoverGroupStatus) {
			st.TopologyGeneration, st.ActiveSite = 6, "b"
		}},
		{"the new leader moved a failover's step", func(st *v1alpha1.MysqlFailoverGroupStatus) {
			st.Failover.Step = v1alpha1.StepPromoting
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGroup("orders", "a", 5)
			g.Status.Failover = &v1alpha1.FailoverIntent{From: "b", To: "a", Generation: 5, Step: v1alpha1.StepFencing}
			cl := fakeStatusClient(t, g)
			old := &statusPatcher{c: cl, reader: cl}
			stale := readGroup(t, cl)
			old.reset(stale)

			leader := &statusPatcher{c: cl, reader: cl}
			fresh := readGroup(t, cl)
			leader.reset(fresh)
			c.move(&fresh.Status)
			if err := leader.PersistStatus(t.Context(), fresh); err != nil {
				t.Fatal(err)
			}
			want := readGroup(t, cl).Status

			// The former leader wakes up and writes what it based on generation 5.
			stale.Status.Sites = []v1alpha1.SiteStatus{{Name: "a", Fenced: true}}
			err := old.PersistStatus(t.Context(), stale)
			if !errors.Is(err, ErrAuthorityMoved) {
				t.Fatalf("want ErrAuthorityMoved, got %v", err)
			}
			got := readGroup(t, cl).Status
			if got.TopologyGeneration != want.TopologyGeneration || got.ActiveSite != want.ActiveSite ||
				got.Failover.Step != want.Failover.Step || len(got.Sites) != 0 {
				t.Fatalf("stale status written back: got %+v, want %+v", got, want)
			}
			// The rest of the pass writes nothing either: it re-observes first.
			if err := old.PersistStatus(t.Context(), stale); !errors.Is(err, ErrAuthorityMoved) {
				t.Fatalf("second write of the pass: want ErrAuthorityMoved, got %v", err)
			}
		})
	}
}

// TestStatusPatcherRefusesALowerGeneration: no write lowers the generation
// the patcher based its change on, conflict or not.
func TestStatusPatcherRefusesALowerGeneration(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	p := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	p.reset(g)
	g.Status.TopologyGeneration = 4
	if err := p.PersistStatus(t.Context(), g); !errors.Is(err, ErrAuthorityMoved) {
		t.Fatalf("want ErrAuthorityMoved, got %v", err)
	}
	if got := readGroup(t, cl).Status.TopologyGeneration; got != 5 {
		t.Fatalf("generation %d, want 5", got)
	}
}

// TestStatusPatcherReappliesOverUnrelatedChanges: a conflict caused by a
// change that leaves the authority alone (an annotation, conditions) is
// still resolved by writing again on top.
func TestStatusPatcherReappliesOverUnrelatedChanges(t *testing.T) {
	cl := fakeStatusClient(t, testGroup("orders", "a", 5))
	p := &statusPatcher{c: cl, reader: cl}
	g := readGroup(t, cl)
	p.reset(g)
	other := readGroup(t, cl)
	other.Annotations = map[string]string{"x": "y"}
	if err := cl.Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	g.Status.TopologyGeneration, g.Status.ActiveSite = 6, "b"
	if err := p.PersistStatus(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if got := readGroup(t, cl).Status; got.TopologyGeneration != 6 || got.ActiveSite != "b" {
		t.Fatalf("got %+v", got)
	}
}

// Review of issue 13: a group whose status lost its active site but kept
// generation G adopted a new authority at the same G. A generation must
// name one site: peers that reported holding G counted as having adopted
// the new view, and a sidecar still relaying (G, old site) kept the old
// site's lease alive. Adopting an authority raises the generation.
func TestAdoptAuthorityRaisesTheGeneration(t *testing.T) {
	g := testGroup("orders", "", 7)
	cl := fakeStatusClient(t, g)
	l := testLoop()
	l.key = client.ObjectKeyFromObject(g)
	l.env.Registry = authority.NewRegistry(func() time.Time { return t0 })
	l.patcher = &statusPatcher{c: cl, reader: cl}
	cur := readGroup(t, cl)
	l.patcher.reset(cur)
	if err := l.adoptAuthority(t.Context(), cur, "b"); err != nil {
		t.Fatal(err)
	}
	st := readGroup(t, cl).Status
	if st.ActiveSite != "b" || st.TopologyGeneration != 8 {
		t.Fatalf("adopted %q at generation %d, want b at 8", st.ActiveSite, st.TopologyGeneration)
	}
	if v, _, ok := l.env.Registry.View(l.key); !ok || v.Generation != 8 || v.ActiveSite != "b" {
		t.Fatalf("published %+v (%v), want b at 8", v, ok)
	}
}
