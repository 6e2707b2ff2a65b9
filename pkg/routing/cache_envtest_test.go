//go:build envtest

package routing_test

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// createCachePods makes one cache Pod per site with its Deployment
// template's labels, as the Deployment controller would.
func createCachePods(t *testing.T, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	for _, s := range g.Spec.Sites {
		var d appsv1.Deployment
		get(t, g.Namespace, routing.CacheSiteName(g.Name, s.Name), &d)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-0", d.Name), Namespace: g.Namespace,
				Labels: d.Spec.Template.Labels},
			Spec: d.Spec.Template.Spec,
		}
		if err := cp.Client.Create(testContext(t), p); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
}

// cacheSelected lists, by site, the cache Pods a Service selects.
func cacheSelected(t *testing.T, ns, service string) []string {
	t.Helper()
	var svc corev1.Service
	get(t, ns, service, &svc)
	var pods corev1.PodList
	if err := cp.Client.List(testContext(t), &pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, p := range pods.Items {
		sites = append(sites, p.Labels[routing.CacheLabelSite])
	}
	slices.Sort(sites)
	return sites
}

// TestCacheTrafficFollowsSetCacheTraffic: Converge makes the cache's
// objects, and <group>-dragonfly selects the one site SetCacheTraffic
// names, none while it is stripped; the MySQL Services never pick a cache Pod.
func TestCacheTrafficFollowsSetCacheTraffic(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "shop", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}},
		map[string]any{"dragonfly": map[string]any{"enabled": true}})
	r := newRouter()
	converge(t, r, g)
	createPods(t, g)
	createCachePods(t, g)
	if err := r.SetRoleLabels(testContext(t), g, "a"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		site string
		want []string
	}{
		{"traffic on a", "a", []string{"a"}},
		{"stripped before the takeover", "", nil},
		{"moved to b", "b", []string{"b"}},
		{"repeated: no change", "b", []string{"b"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := r.SetCacheTraffic(testContext(t), g, s.site); err != nil {
				t.Fatal(err)
			}
			if got := cacheSelected(t, ns, routing.CacheServiceName(g.Name)); !slices.Equal(got, s.want) {
				t.Fatalf("%s selects %v, want %v", routing.CacheServiceName(g.Name), got, s.want)
			}
			for _, svc := range []string{routing.PrimaryServiceName(g.Name), routing.ReplicasServiceName(g.Name)} {
				if got := cacheSelected(t, ns, svc); slices.ContainsFunc(got, func(s string) bool { return s != "" }) {
					t.Fatalf("%s selects cache Pods %v", svc, got)
				}
			}
		})
	}
	if err := r.SetCacheTraffic(testContext(t), g, "zz"); err == nil {
		t.Fatal("an unknown site was accepted")
	}
}
