//go:build envtest

package controller_test

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// kubelet stands for one node's kubelet: its Node (Ready) and heartbeat Lease.
type kubelet struct {
	e    *env
	name string
	beat time.Time // the node's own clock, unrelated to the test's
}

func (e *env) newKubelet(name string) *kubelet {
	e.t.Helper()
	ctx := e.t.Context()
	if err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-node-lease"}}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	k := &kubelet{e: e, name: name, beat: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := cp.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		e.t.Fatal(err)
	}
	renew := metav1.NewMicroTime(k.beat)
	if err := cp.Client.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}); err != nil {
		e.t.Fatal(err)
	}
	k.heartbeat(0)
	return k
}

// heartbeat advances the node's clock by d and reports Ready with it.
func (k *kubelet) heartbeat(d time.Duration) {
	k.e.t.Helper()
	ctx := k.e.t.Context()
	k.beat = k.beat.Add(d)
	var n corev1.Node
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: k.name}, &n); err != nil {
		k.e.t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.NewTime(k.beat), LastTransitionTime: metav1.NewTime(k.beat), Reason: "KubeletReady"}}
	if err := cp.Client.Status().Update(ctx, &n); err != nil {
		k.e.t.Fatal(err)
	}
	var l coordinationv1.Lease
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "kube-node-lease", Name: k.name}, &l); err != nil {
		k.e.t.Fatal(err)
	}
	renew := metav1.NewMicroTime(k.beat)
	l.Spec.RenewTime = &renew
	if err := cp.Client.Update(ctx, &l); err != nil {
		k.e.t.Fatal(err)
	}
}

// TestForceDeletedPodWaitsForItsKubelet: a's mysqld dies with no sidecar
// running (so no report and no lease deadline can confirm its fence), and
// its Pod, on node n, is force-deleted. Before, that confirmed the fence at
// once. Now b stays read-only while n's kubelet has not had time to stop
// the containers: one heartbeat 10 s after the deletion is not enough (the
// kubelet stops them with the Pod's 30 s grace period); once the heartbeat
// advanced by the grace period plus one interval, Pod gone confirms and b
// is promoted.
func TestForceDeletedPodWaitsForItsKubelet(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.createGroup(nil)
	k := e.newKubelet(e.ns + "-n")
	ctx := t.Context()
	old := &corev1.Pod{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "orders-a-0"}, old); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Delete(ctx, old, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	onNode := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orders-a-1", Namespace: e.ns, Labels: old.Labels},
		Spec: corev1.PodSpec{NodeName: k.name, Containers: old.Spec.Containers}}
	if err := cp.Client.Create(ctx, onNode); err != nil {
		t.Fatal(err)
	}
	e.startOperator()
	e.healthy()
	// b's sidecar asks (it must, before b is made writable), holding the
	// first view: a peer that may still serve a's lease, so that only the
	// Pod-gone proof can confirm a.
	e.keepAskingHolding(1, "b")
	e.db.Kill(0)
	e.eventually(10*time.Second, "intent persisted", func() bool { return e.get().Status.TopologyGeneration == 2 })
	if err := cp.Client.Delete(ctx, onNode, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	staysReadOnly := func(why string) {
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			if e.writable("b") {
				t.Fatal("b promoted on a force-deleted Pod " + why)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	staysReadOnly("whose kubelet never heartbeated since")
	k.heartbeat(10 * time.Second)
	staysReadOnly("one heartbeat after its deletion, within its grace period")
	k.heartbeat(35 * time.Second)
	e.eventually(10*time.Second, "b writable", func() bool { return e.writable("b") })
	e.eventually(5*time.Second, "confirmed by Pod gone", func() bool {
		for _, ev := range e.events(v1alpha1.EventFailoverExecuted) {
			if strings.Contains(ev.Note, "pod-gone") {
				return true
			}
		}
		return false
	})
}
