//go:build envtest

package routing_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A site Deployment edited by hand keeps its template hash, so only its
// spec tells: SiteWorkloads calls it drifted (not stale), never one left
// alone, and ApplySiteWorkload, the ordered update's step, rolls it back.
// What another manager adds that the operator never sets stays and is no
// drift.
func TestSiteWorkloadsDrift(t *testing.T) {
	ns := newNamespace(t)
	sites := []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc"},
		{name: "d", zone: "zd"}, {name: "e", zone: "ze"}}
	g := createGroup(t, ns, "drift", sites, nil)
	r, ctx := newRouter(), testContext(t)
	converge(t, r, g)
	rendered := map[string]appsv1.DeploymentSpec{}
	for _, s := range sites {
		var d appsv1.Deployment
		get(t, ns, routing.SiteName(g.Name, s.name), &d)
		rendered[s.name] = d.Spec
	}
	edit := func(site string, f func(*appsv1.Deployment)) {
		var d appsv1.Deployment
		get(t, ns, routing.SiteName(g.Name, site), &d)
		f(&d)
		if err := cp.Client.Update(ctx, &d, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatalf("edit %s: %v", site, err)
		}
	}
	edit("b", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "mariadb:10.6" })
	edit("c", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32) })
	edit("d", func(d *appsv1.Deployment) {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	})
	edit("e", func(d *appsv1.Deployment) {
		d.Spec.Template.Labels["team"] = "payments"
		c := &d.Spec.Template.Spec.Containers[0]
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	})
	cases := []struct {
		site    string
		drifted bool
	}{
		{"a", false}, // untouched
		{"b", true},  // the mysqld image
		{"c", true},  // scaled to zero
		{"d", true},  // RollingUpdate: two mysqld on one volume
		{"e", false}, // a label and limits the operator never sets: kept by an apply, so no drift
	}
	workloads := func() map[string]routing.Workload {
		w, err := r.SiteWorkloads(ctx, cp.Client, g)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for range 2 { // the second answer comes from the cache
		w := workloads()
		for _, c := range cases {
			if got := w[c.site]; got.Drifted != c.drifted || got.Stale || got.DriftErr != nil {
				t.Fatalf("site %s: %+v, want drifted %v and not stale", c.site, got, c.drifted)
			}
		}
	}
	w := workloads()
	for _, c := range cases {
		if !c.drifted {
			continue
		}
		if err := r.ApplySiteWorkload(ctx, g, c.site, w[c.site].ResourceVersion); err != nil {
			t.Fatalf("roll back %s: %v", c.site, err)
		}
		var d appsv1.Deployment
		get(t, ns, routing.SiteName(g.Name, c.site), &d)
		if !equality.Semantic.DeepEqual(d.Spec, rendered[c.site]) {
			t.Errorf("site %s after the roll back: spec %+v, want the rendering", c.site, d.Spec)
		}
		if d.Annotations[v1alpha1.AnnotationTemplateHash] == "" {
			t.Errorf("site %s lost its hash", c.site)
		}
	}
	for site, got := range workloads() {
		if got.Drifted || got.Stale {
			t.Errorf("site %s after the roll back: %+v, want current", site, got)
		}
	}
}
