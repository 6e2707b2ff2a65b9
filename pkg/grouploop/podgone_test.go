package grouploop

import (
	"math"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/pkg/authority"
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
		{"heartbeat since, node not Ready", false, time.Minute, false},
		{"one heartbeat since, within the grace period (30 s unset)", true, 10 * time.Second, false},
		{"heartbeats past the grace period plus one margin", true, 40 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := nodeWorld(t, true, nodeClock)
			now := t0
			deb, _ := topology.NewDebouncer(1, 1)
			if _, _, err := deb.Observe(t0, topology.ProbeFailed); err != nil {
				t.Fatal(err)
			}
			l := &Loop{env: &Env{Reader: cl, Clock: clockAt(func() time.Time { return now })},
				deb: map[string]*topology.Debouncer{"a": deb}, seenPod: map[string]bool{"a": true},
				podNodes: map[string]map[types.UID]podNode{}, goneNodes: map[string]map[types.UID]goneWatch{},
				kubeletStopped: map[string]time.Time{}}
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
	l := &Loop{env: &Env{Reader: cl, Clock: clockAt(func() time.Time { return t0 })},
		deb: map[string]*topology.Debouncer{}, seenPod: map[string]bool{"a": true},
		podNodes: map[string]map[types.UID]podNode{}, goneNodes: map[string]map[types.UID]goneWatch{}, kubeletStopped: map[string]time.Time{}}
	l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p1": {node: "gone-node"}})
	l.podsNow = map[string][]time.Time{}
	l.trackGonePods(t.Context(), "a", nil)
	l.trackGonePods(t.Context(), "a", nil)
	if l.podGone("a", t0) {
		t.Fatal("a Pod on a node that does not exist confirmed the fence")
	}
}

// TestPodGoneWaitsForTheGracePeriod: the kubelet stops a deleted Pod's
// containers with its termination grace period, so one heartbeat after the
// deletion proves nothing. The node's heartbeat (its own clock) must have
// advanced by the Pod's grace period as last listed (30 s when unset) plus
// one heartbeat interval (10 s) beyond the read taken when the Pod was
// first seen gone.
func TestPodGoneWaitsForTheGracePeriod(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	cases := []struct {
		name          string
		grace, delete *int64
		beat          time.Duration
		want          bool
	}{
		{"unset: 30 s + 10 s, one second short", nil, nil, 39 * time.Second, false},
		{"unset: 30 s + 10 s reached", nil, nil, 40 * time.Second, true},
		{"grace 0: one heartbeat interval", secs(0), nil, 10 * time.Second, true},
		{"grace 0: less than one interval", secs(0), nil, 9 * time.Second, false},
		{"grace 120 s", secs(120), nil, 100 * time.Second, false},
		{"grace 120 s reached", secs(120), nil, 130 * time.Second, true},
		{"a longer deletion grace period counts", secs(30), secs(300), 200 * time.Second, false},
		{"a longer deletion grace period reached", secs(30), secs(300), 310 * time.Second, true},
		{"a negative grace period counts as 0", secs(-5), nil, 10 * time.Second, true},
		{"max int64 grace does not overflow into a short wait", secs(math.MaxInt64), nil, 1000 * time.Hour, false},
	}
	nodeClock := t0.Add(7 * time.Hour) // the node's clock, far from the operator's
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := nodeWorld(t, true, nodeClock)
			l := newPodGoneLoop(cl, clockAt(func() time.Time { return t0 }), authority.NewRegistry(func() time.Time { return t0 }))
			l.seenPod["a"] = true
			l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p1": {node: "n1", grace: c.grace, deletionGrace: c.delete}})
			l.podsNow = map[string][]time.Time{}
			l.trackGonePods(t.Context(), "a", nil)
			beatAt(t, cl, true, nodeClock.Add(c.beat))
			l.trackGonePods(t.Context(), "a", nil)
			if got := l.podGone("a", t0.Add(-time.Minute)); got != c.want {
				t.Fatalf("podGone = %v, want %v", got, c.want)
			}
		})
	}
}

// TestPodGoneEachPodFromItsOwnDeletion: two Pods of a site on one node go
// away at different times; the second one's wait counts from when it was
// seen gone, not from the first one's read.
func TestPodGoneEachPodFromItsOwnDeletion(t *testing.T) {
	nodeClock := t0.Add(-time.Hour)
	cl := nodeWorld(t, true, nodeClock)
	l := newPodGoneLoop(cl, clockAt(func() time.Time { return t0 }), authority.NewRegistry(func() time.Time { return t0 }))
	l.seenPod["a"] = true
	l.podsNow = map[string][]time.Time{}
	l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p1": {node: "n1"}, "p2": {node: "n1"}})
	l.trackGonePods(t.Context(), "a", map[types.UID]podNode{"p2": {node: "n1"}})
	beatAt(t, cl, true, nodeClock.Add(35*time.Second))
	l.trackGonePods(t.Context(), "a", nil) // p2 seen gone now, the node at +35 s
	beatAt(t, cl, true, nodeClock.Add(50*time.Second))
	l.trackGonePods(t.Context(), "a", nil)
	if l.podGone("a", t0.Add(-time.Minute)) {
		t.Fatal("p2 counted stopped 15 s after it was seen gone")
	}
	beatAt(t, cl, true, nodeClock.Add(75*time.Second))
	l.trackGonePods(t.Context(), "a", nil)
	if !l.podGone("a", t0.Add(-time.Minute)) {
		t.Fatal("both Pods' waits passed, still not gone")
	}
}
