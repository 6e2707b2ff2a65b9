package grouploop

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestPodGoneNeverReadsTheAPIServerClock: site a runs two Pods (a rollout
// in progress), p1 on node n1 and p2, both listed before a fails. The API
// server's clock runs an hour ahead of the operator's, so p2's
// creationTimestamp reads as after the failure. Then p1 is force-deleted
// and n1's kubelet proves it stopped p1. p2 is still there and may run a
// writable mysqld: "Pod gone" must not confirm a's fence. Before, a Pod
// created (API server clock) after the failure (operator clock) counted as
// a replacement that booted fenced, so p2 was ignored.
func TestPodGoneNeverReadsTheAPIServerClock(t *testing.T) {
	cases := []struct {
		name     string
		apiClock time.Duration // the API server's clock minus the operator's
		second   string        // "before": p2 listed before the failure; "after": p2 replaces p1 after it
		want     bool
	}{
		{"a second Pod listed before the failure, API clock an hour ahead", time.Hour, "before", false},
		{"a replacement first listed after the failure, API clock an hour behind", -time.Hour, "after", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { podGoneAcrossClocks(t, t0.Add(c.apiClock), c.second, c.want) })
	}
}

func podGoneAcrossClocks(t *testing.T, apiClock time.Time, second string, want bool) {
	nodeClock := t0.Add(-5 * time.Hour)
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(apiClock),
			Labels:            map[string]string{v1alpha1.LabelGroup: "orders", v1alpha1.LabelSite: "a"}},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	renew := metav1.NewMicroTime(nodeClock)
	objs := []client.Object{pod("p1", "n1"),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(nodeClock)}}}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: nodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}}
	cl := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	now := t0
	clock := clockAt(func() time.Time { return now })
	l := newPodGoneLoop(cl, clock, authority.NewRegistry(clock.Now))
	l.env.Client = cl
	g := testGroup("orders", "b", 3)
	l.key = types.NamespacedName{Namespace: g.Namespace, Name: g.Name}

	if second == "before" {
		if err := cl.Create(t.Context(), pod("p2", "n2")); err != nil {
			t.Fatal(err)
		}
	}
	l.observePods(t.Context(), g) // before the failure
	now = t0.Add(10 * time.Second)
	failing := now
	deb, _ := topology.NewDebouncer(1, 1)
	if _, _, err := deb.Observe(failing, topology.ProbeFailed); err != nil {
		t.Fatal(err)
	}
	l.deb["a"] = deb
	if err := cl.Delete(t.Context(), pod("p1", "n1"), client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(20 * time.Second)
	l.observePods(t.Context(), g)
	if second == "after" {
		if err := cl.Create(t.Context(), pod("p2", "n2")); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(25 * time.Second)
	l.observePods(t.Context(), g)
	beatAt(t, cl, true, nodeClock.Add(time.Hour))
	now = t0.Add(90 * time.Second)
	l.observePods(t.Context(), g)
	if l.stoppedAt("a").IsZero() {
		t.Fatal("setup: n1's kubelet proof not taken")
	}
	if got := l.podGone("a", failing); got != want {
		t.Fatalf("podGone = %v, want %v (p2 %s the failure)", got, want, second)
	}
}
