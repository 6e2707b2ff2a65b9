//go:build envtest

package routing_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/routing"
)

// An image changed on a site's Pod (not on its Deployment) is Pod drift,
// told only once the Deployment is rolled out; RepairSitePod sets the
// image back from the Deployment's template and touches nothing else.
// Labels added to the Pod are not drift. A paused Deployment is drift of
// its strategy, set back without touching the template.
func TestSiteWorkloadsPodDrift(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "pods", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}}, nil)
	r, ctx := newRouter(), testContext(t)
	converge(t, r, g)
	for _, s := range []string{"a", "b"} {
		var d appsv1.Deployment
		get(t, ns, routing.SiteName(g.Name, s), &d)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1,
			ReadyReplicas: 1, AvailableReplicas: 1}
		if err := cp.Client.Status().Update(ctx, &d); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-x", Namespace: ns,
			Labels: d.Spec.Template.Labels}, Spec: *d.Spec.Template.Spec.DeepCopy()}
		if err := cp.Client.Create(ctx, pod); err != nil {
			t.Fatalf("create the Pod of %s: %v", s, err)
		}
	}
	var pod corev1.Pod
	get(t, ns, routing.SiteName(g.Name, "b")+"-x", &pod)
	image := pod.Spec.Containers[1].Image
	pod.Spec.Containers[1].Image = "example/other-sidecar:1"
	pod.Labels["team"] = "payments"
	if err := cp.Client.Update(ctx, &pod, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("set image on b's Pod: %v", err)
	}
	var a corev1.Pod
	get(t, ns, routing.SiteName(g.Name, "a")+"-x", &a)
	a.Labels["team"] = "payments"
	if err := cp.Client.Update(ctx, &a, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	w, err := r.SiteWorkloads(ctx, cp.Client, g)
	if err != nil {
		t.Fatal(err)
	}
	if got := w["b"]; !got.PodDrifted || got.Pod != pod.Name || got.Stale || got.Drifted {
		t.Fatalf("b: %+v, want its Pod drifted and its Deployment current", got)
	}
	if got := w["a"]; got.PodDrifted || got.Stale || got.Drifted {
		t.Fatalf("a (a label added to its Pod): %+v, want no drift", got)
	}
	if err := r.RepairSitePod(ctx, g, "b", pod.Name, pod.UID, w["b"].PodResourceVersion); err != nil {
		t.Fatalf("repair b's Pod: %v", err)
	}
	get(t, ns, pod.Name, &pod)
	if pod.Spec.Containers[1].Image != image || pod.Labels["team"] != "payments" {
		t.Fatalf("b's Pod after the repair: image %s labels %v, want %s and the added label kept",
			pod.Spec.Containers[1].Image, pod.Labels, image)
	}
	if w, err = r.SiteWorkloads(ctx, cp.Client, g); err != nil || w["b"].PodDrifted {
		t.Fatalf("b after the repair: %+v, %v", w["b"], err)
	}

	var d appsv1.Deployment
	get(t, ns, routing.SiteName(g.Name, "a"), &d)
	d.Spec.Paused = true
	if err := cp.Client.Update(ctx, &d, client.FieldOwner("kubectl-rollout-pause")); err != nil {
		t.Fatal(err)
	}
	if w, err = r.SiteWorkloads(ctx, cp.Client, g); err != nil || !w["a"].StrategyDrifted || !w["a"].Drifted {
		t.Fatalf("a paused: %+v, %v; want its strategy drifted", w["a"], err)
	}
	if err := r.RestoreSiteStrategy(ctx, g, "a", w["a"].ResourceVersion); err != nil {
		t.Fatal(err)
	}
	get(t, ns, routing.SiteName(g.Name, "a"), &d)
	if d.Spec.Paused {
		t.Fatalf("a still paused")
	}
}
