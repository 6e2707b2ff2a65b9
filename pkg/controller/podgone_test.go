package controller

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

	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// nodeWorld is a node n1 with its Ready condition and heartbeat Lease.
func nodeWorld(t *testing.T, ready bool, beat time.Time) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := coordinationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.NewTime(beat)}}}}
	renew := metav1.NewMicroTime(beat)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: nodeLeaseNamespace},
		Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(node, lease).Build()
}

func beatAt(t *testing.T, c client.Client, ready bool, beat time.Time) {
	t.Helper()
	var lease coordinationv1.Lease
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: nodeLeaseNamespace, Name: "n1"}, &lease); err != nil {
		t.Fatal(err)
	}
	renew := metav1.NewMicroTime(beat)
	lease.Spec.RenewTime = &renew
	if err := c.Update(t.Context(), &lease); err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	if err := c.Get(t.Context(), client.ObjectKey{Name: "n1"}, &node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions[0].Status = corev1.ConditionFalse
	if ready {
		node.Status.Conditions[0].Status = corev1.ConditionTrue
	}
	if err := c.Status().Update(t.Context(), &node); err != nil {
		if err := c.Update(t.Context(), &node); err != nil {
			t.Fatal(err)
		}
	}
	var check corev1.Node
	if err := c.Get(t.Context(), client.ObjectKey{Name: "n1"}, &check); err != nil || check.Status.Conditions[0].Status != node.Status.Conditions[0].Status {
		t.Fatalf("node status not updated: %v", err)
	}
}

// TestPodGoneWaitsForTheKubelet: a's Pod on node n1 is force-deleted while
// a is failing. Before, that confirmed the fence at once. Now it does not
// until n1 is Ready and its kubelet heartbeated after the deletion was
// seen; a node without heartbeats (or not Ready) never confirms it.
func TestPodGoneWaitsForTheKubelet(t *testing.T) {
	// The node's clock is far from the operator's: only its own values count.
	nodeClock := t0.Add(-3 * time.Hour)
	cases := []struct {
		name  string
		ready bool
		beat  time.Duration // the node's next heartbeat, after the Pod was seen gone
		want  bool
	}{
		{"no heartbeat since the deletion", true, 0, false},
		{"heartbeat since, node not Ready", false, 10 * time.Second, false},
		{"heartbeat since and Ready", true, 10 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := nodeWorld(t, true, nodeClock)
			now := t0
			deb, _ := topology.NewDebouncer(1, 1)
			if _, _, err := deb.Observe(t0, topology.ProbeFailed); err != nil {
				t.Fatal(err)
			}
			l := &groupLoop{op: &Operator{reader: cl, clock: failover.ClockFunc(func() time.Time { return now })},
				deb: map[string]*topology.Debouncer{"a": deb}, seenPod: map[string]bool{"a": true},
				podNodes: map[string]map[types.UID]podNode{}, goneNodes: map[string]map[string]nodeBeat{},
				kubeletStopped: map[string]bool{}}
			l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p1": {node: "n1"}})
			l.podsNow = map[string][]time.Time{"a": {t0.Add(-time.Hour)}}
			if l.podGone("a", t0) {
				t.Fatal("gone while the Pod is listed")
			}
			// Force-deleted: the listing misses it.
			l.podsNow = map[string][]time.Time{}
			l.trackGonePods(t.Context(), "a", nil)
			if l.podGone("a", t0) {
				t.Fatal("a Pod seen gone just now confirmed the fence before its kubelet beat")
			}
			beatAt(t, cl, c.ready, nodeClock.Add(c.beat))
			now = t0.Add(time.Minute)
			l.trackGonePods(t.Context(), "a", nil)
			if got := l.podGone("a", t0); got != c.want {
				t.Fatalf("podGone = %v, want %v", got, c.want)
			}
		})
	}
}

// TestPodGoneNodeDeleted: a Pod whose Node object went away with it never
// confirms by Pod gone.
func TestPodGoneNodeDeleted(t *testing.T) {
	cl := nodeWorld(t, true, t0)
	l := &groupLoop{op: &Operator{reader: cl, clock: failover.ClockFunc(func() time.Time { return t0 })},
		deb: map[string]*topology.Debouncer{}, seenPod: map[string]bool{"a": true},
		podNodes: map[string]map[types.UID]podNode{}, goneNodes: map[string]map[string]nodeBeat{}, kubeletStopped: map[string]bool{}}
	l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p1": {node: "gone-node"}})
	l.podsNow = map[string][]time.Time{}
	l.trackGonePods(t.Context(), "a", nil)
	l.trackGonePods(t.Context(), "a", nil)
	if l.podGone("a", t0) {
		t.Fatal("a Pod on a node that does not exist confirmed the fence")
	}
}
