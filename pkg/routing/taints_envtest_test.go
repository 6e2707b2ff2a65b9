//go:build envtest

package routing_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

func createNode(t *testing.T, name string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	if err := cp.Client.Create(testContext(t), n); err != nil {
		t.Fatalf("create node: %v", err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(testContext(t), n) })
}

// lostPrimary returns each node's lost-primary taint value, "" when untainted.
func lostPrimary(t *testing.T, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		var n corev1.Node
		if err := cp.Client.Get(testContext(t), client.ObjectKey{Name: name}, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = ""
		for _, tn := range n.Spec.Taints {
			if tn.Key == v1alpha1.TaintLostPrimary && tn.Effect == corev1.TaintEffectNoSchedule {
				out[name] = tn.Value
			}
		}
	}
	return out
}

func TestTaintSite(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "inv", []site{
		{name: "a", zone: "za", taint: map[string]string{"bloodraven-test/pool": "a"}},
		{name: "b", zone: "zb", taint: map[string]string{"bloodraven-test/pool": "b"}},
		{name: "c", zone: "zc"}, // no taintNodeSelector: never taints anything
	}, nil)
	other := corev1.Taint{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	createNode(t, "inv-a1", map[string]string{"bloodraven-test/pool": "a"}, other)
	createNode(t, "inv-a2", map[string]string{"bloodraven-test/pool": "a"})
	createNode(t, "inv-b1", map[string]string{"bloodraven-test/pool": "b"})
	nodes := []string{"inv-a1", "inv-a2", "inv-b1"}
	r, ctx, mine := newRouter(), testContext(t), routing.TaintValue(g)

	for range 2 { // the second call must change nothing
		if err := r.TaintSite(ctx, g, "a"); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"inv-a1": mine, "inv-a2": mine, "inv-b1": ""}
	if got := lostPrimary(t, nodes...); !mapsEqual(got, want) {
		t.Errorf("after TaintSite(a): %v, want %v", got, want)
	}
	if got := taintKeys(t, "inv-a1"); got[other.Key] != 1 || got[v1alpha1.TaintLostPrimary] != 1 {
		t.Errorf("inv-a1 taint keys %v: the unrelated taint must stay and the lost-primary taint appear once", got)
	}
	if err := r.TaintSite(ctx, g, "c"); err != nil {
		t.Errorf("TaintSite(c) without a selector: %v", err)
	}
	if n, err := r.UntaintSite(ctx, g, "a"); err != nil || n != 2 {
		t.Fatalf("UntaintSite(a): %d nodes, %v; want 2", n, err)
	}
	if n, err := r.UntaintSite(ctx, g, "a"); err != nil || n != 0 {
		t.Fatalf("UntaintSite(a) again: %d nodes, %v; want nothing changed", n, err)
	}
	want = map[string]string{"inv-a1": "", "inv-a2": "", "inv-b1": ""}
	if got := lostPrimary(t, nodes...); !mapsEqual(got, want) {
		t.Errorf("after UntaintSite(a): %v, want %v", got, want)
	}
	if got := taintKeys(t, "inv-a1"); got[other.Key] != 1 || got[v1alpha1.TaintLostPrimary] != 0 {
		t.Errorf("inv-a1 taint keys %v: want the unrelated taint kept and ours gone", got)
	}
}

// taintKeys counts a node's taints by key. The API server adds its own
// (node.kubernetes.io/not-ready) to a new Node.
func taintKeys(t *testing.T, name string) map[string]int {
	t.Helper()
	var n corev1.Node
	if err := cp.Client.Get(testContext(t), client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, tn := range n.Spec.Taints {
		out[tn.Key]++
	}
	return out
}

func TestUntaintSiteLeavesOtherGroupsTaint(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "geo", []site{
		{name: "a", zone: "za", taint: map[string]string{"bloodraven-test/pool": "shared"}},
		{name: "b", zone: "zb"},
	}, nil)
	theirs := corev1.Taint{Key: v1alpha1.TaintLostPrimary, Value: "elsewhere.other", Effect: corev1.TaintEffectNoSchedule}
	createNode(t, "geo-shared", map[string]string{"bloodraven-test/pool": "shared"}, theirs)
	r, ctx := newRouter(), testContext(t)
	if err := r.TaintSite(ctx, g, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UntaintSite(ctx, g, "a"); err != nil {
		t.Fatal(err)
	}
	if got := lostPrimary(t, "geo-shared"); got["geo-shared"] != theirs.Value {
		t.Errorf("lost-primary taint %q, want the other group's %q kept", got["geo-shared"], theirs.Value)
	}
}
