package routing

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func cacheGroup(enabled bool) *v1alpha1.MysqlFailoverGroup {
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Name, g.Namespace = "shop", "ns"
	g.Spec.Sites = []v1alpha1.Site{{Name: "iad"}, {Name: "pdx"}}
	g.Spec.Dragonfly = v1alpha1.DragonflySpec{Enabled: enabled, Image: "dragonfly:test"}
	return g
}

// TestRenderCacheObjects: Dragonfly enabled renders a Service and a
// Deployment per site plus <group>-dragonfly; disabled renders nothing.
func TestRenderCacheObjects(t *testing.T) {
	cases := []struct {
		name    string
		enabled bool
		want    []string
	}{
		{"disabled: nothing", false, nil},
		{"enabled: per site and the group's Service", true, []string{"Service/shop-iad-dragonfly",
			"Deployment/shop-iad-dragonfly", "Service/shop-pdx-dragonfly", "Deployment/shop-pdx-dragonfly", "Service/shop-dragonfly"}},
	}
	r := &Router{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, o := range r.renderCacheObjects(cacheGroup(c.enabled)) {
				kind := "Service"
				if _, ok := o.(*appsv1.Deployment); ok {
					kind = "Deployment"
				}
				got = append(got, kind+"/"+o.GetName())
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestCacheSelectorsNeverPickMySQL: no MySQL Service selects a cache Pod,
// and the cache Services select only cache Pods: the group Service the
// one carrying the traffic label.
func TestCacheSelectorsNeverPickMySQL(t *testing.T) {
	g := cacheGroup(true)
	r := &Router{}
	iad := renderCacheDeployment(g, g.Spec.Sites[0]).Spec.Template.Labels
	traffic := labels.Merge(iad, labels.Set{CacheLabelTraffic: "true"})
	mysqlPod := labels.Set(podLabels(g, "iad"))
	mysqlPrimary := labels.Merge(mysqlPod, labels.Set{v1alpha1.LabelRole: v1alpha1.RolePrimary})
	svc := func(s *corev1.Service) labels.Selector { return labels.SelectorFromSet(s.Spec.Selector) }
	cases := []struct {
		name     string
		selector labels.Selector
		pod      labels.Set
		want     bool
	}{
		{"-primary never picks the traffic cache Pod", svc(renderRoleService(g, PrimaryServiceName(g.Name), v1alpha1.ServiceRW, nil)), traffic, false},
		{"-replicas never picks a cache Pod", svc(renderRoleService(g, ReplicasServiceName(g.Name), v1alpha1.ServiceRO, nil)), labels.Set(iad), false},
		{"-any never picks a cache Pod", svc(renderRoleService(g, AnyServiceName(g.Name), v1alpha1.ServiceR, nil)), traffic, false},
		{"site Service never picks a cache Pod", svc(r.renderSiteService(g, g.Spec.Sites[0])), traffic, false},
		{"group listing never picks a cache Pod", labels.SelectorFromSet(labels.Set{v1alpha1.LabelGroup: g.Name}), traffic, false},
		{"-dragonfly picks the traffic Pod", svc(renderCacheService(g)), traffic, true},
		{"-dragonfly skips a Pod without the label", svc(renderCacheService(g)), labels.Set(iad), false},
		{"-dragonfly never picks the MySQL primary", svc(renderCacheService(g)), mysqlPrimary, false},
		{"cache site Service picks its Pod", svc(renderCacheSiteService(g, g.Spec.Sites[0])), labels.Set(iad), true},
		{"cache site Service skips the other site", svc(renderCacheSiteService(g, g.Spec.Sites[1])), labels.Set(iad), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.selector.Matches(c.pod); got != c.want {
				t.Fatalf("%s matches %v: %v, want %v", c.selector, c.pod, got, c.want)
			}
		})
	}
}
