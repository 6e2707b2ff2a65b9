package sim

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestReadCache: a read through the cache is what the fake client reads,
// first and again, and a write is seen by the next read.
func TestReadCache(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "n"}}
	renew := metav1.NewMicroTime(at)
	lease.Spec.RenewTime = &renew
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.NewTime(at)}}
	c := fake.NewClientBuilder().WithScheme(simScheme).WithObjects(lease, node).Build()
	rc := newReadCache()
	check := func(step string, key client.ObjectKey, got, want client.Object) {
		t.Helper()
		if handled, err := rc.get(ctx, c, key, got); !handled || err != nil {
			t.Fatalf("%s: cached read: handled=%v err=%v", step, handled, err)
		}
		if err := c.Get(ctx, key, want); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("%s: cached read %+v, the client reads %+v", step, got, want)
		}
	}
	leaseKey, nodeKey := client.ObjectKeyFromObject(lease), client.ObjectKeyFromObject(node)
	for _, step := range []string{"first read", "read again"} {
		check(step, leaseKey, &coordinationv1.Lease{}, &coordinationv1.Lease{})
		check(step, nodeKey, &corev1.Node{}, &corev1.Node{})
	}
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, leaseKey, l); err != nil {
		t.Fatal(err)
	}
	later := metav1.NewMicroTime(at.Add(10 * time.Second))
	l.Spec.RenewTime = &later
	rc.forget(l)
	if err := c.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	got := &coordinationv1.Lease{}
	check("read after a write", leaseKey, got, &coordinationv1.Lease{})
	if !got.Spec.RenewTime.Time.Equal(later.Time.Truncate(time.Microsecond)) {
		t.Fatalf("read after a write: renewed at %v, want %v", got.Spec.RenewTime, later)
	}
	if handled, _ := rc.get(ctx, c, client.ObjectKey{Name: "x"}, &corev1.Pod{}); handled {
		t.Fatal("a Pod read was taken by the cache")
	}
}
