//go:build envtest

package routing_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A Deployment made before hashes existed gets its hash from Converge
// without a change of its Pod template when the template is what the spec
// renders, and is left stale (no hash, untouched template) when it is not.
func TestConvergeAdoptsDeploymentsWithoutHash(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "adopt", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}}, nil)
	r, ctx := newRouter(), testContext(t)
	converge(t, r, g)
	strip := func(site string, image string) int64 {
		var d appsv1.Deployment
		get(t, ns, routing.SiteName(g.Name, site), &d)
		delete(d.Annotations, v1alpha1.AnnotationTemplateHash)
		if image != "" {
			d.Spec.Template.Spec.Containers[0].Image = image
		}
		if err := cp.Client.Update(ctx, &d); err != nil {
			t.Fatal(err)
		}
		return d.Generation
	}
	strip("a", "")
	strip("b", "mariadb:10.6")
	var before appsv1.Deployment
	get(t, ns, routing.SiteName(g.Name, "a"), &before)
	converge(t, r, g)
	var a, b appsv1.Deployment
	get(t, ns, routing.SiteName(g.Name, "a"), &a)
	get(t, ns, routing.SiteName(g.Name, "b"), &b)
	// The Pod template decides whether the Pod restarts.
	if a.Annotations[v1alpha1.AnnotationTemplateHash] == "" || !equality.Semantic.DeepEqual(a.Spec.Template, before.Spec.Template) {
		t.Errorf("a: hash %q, template changed %v; want the hash added without a template change",
			a.Annotations[v1alpha1.AnnotationTemplateHash], !equality.Semantic.DeepEqual(a.Spec.Template, before.Spec.Template))
	}
	if b.Annotations[v1alpha1.AnnotationTemplateHash] != "" || b.Spec.Template.Spec.Containers[0].Image != "mariadb:10.6" {
		t.Errorf("b: hash %q image %s; want it left alone for the ordered update",
			b.Annotations[v1alpha1.AnnotationTemplateHash], b.Spec.Template.Spec.Containers[0].Image)
	}
	w, err := r.SiteWorkloads(ctx, cp.Client, g)
	if err != nil {
		t.Fatal(err)
	}
	if w["a"].Stale || !w["b"].Stale {
		t.Errorf("workloads %+v: want b stale only", w)
	}
}
