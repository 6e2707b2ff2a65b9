//go:build envtest

package controller_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The lost-primary taint follows the site both ways: an emergency failover
// taints the old primary's nodes, and once that site is the writable
// primary again (here by a planned failover back) its nodes lose the taint.
func TestTaintFollowsTheSite(t *testing.T) {
	e := newEnv(t, "a", "b")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-node-a", Labels: map[string]string{"pool": e.ns + "-a"}}}
	if err := cp.Client.Create(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(t.Context(), node) })
	e.createGroup(func(spec map[string]any) {
		spec["sites"].([]any)[0].(map[string]any)["taintNodeSelector"] = map[string]any{"pool": e.ns + "-a"}
		spec["failoverCooldown"] = "1s"
	})
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	tainted := func() bool {
		var n corev1.Node
		if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(node), &n); err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == v1alpha1.TaintLostPrimary })
	}
	e.db.Kill(0)
	e.eventually(20*time.Second, "a's node tainted after the failover to b", func() bool {
		return e.get().Status.ActiveSite == "b" && tainted()
	})
	if err := e.db.Start(0); err != nil {
		t.Fatal(err)
	}
	e.eventually(30*time.Second, "a replicates from b", func() bool {
		s := site(e.get(), "a")
		return s.State == v1alpha1.StateReadOnly && s.Replicating
	})
	if !tainted() {
		t.Fatal("a's node untainted while a is a replica")
	}
	e.annotate("a")
	e.planned("a", v1alpha1.PhaseSucceeded, 30*time.Second)
	e.eventually(10*time.Second, "a's node untainted", func() bool { return !tainted() })
	e.assertEvents(v1alpha1.EventSiteUntainted)
}
