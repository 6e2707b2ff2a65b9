//go:build envtest

package routing_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestReadServicesFollowHealth: a replica that is diverged, fenced, lagging
// or stopped leaves -replicas and -any as soon as ReadRoutes says so, and
// comes back once healthy; a dr-only site is in neither; the demoted
// primary loses its place with its role.
func TestReadServicesFollowHealth(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "reads", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"},
		{name: "c", zone: "zc"}, {name: "d", zone: "zd", role: "dr-only"}}, nil)
	r := newRouter()
	converge(t, r, g)
	createPods(t, g)
	ctx := testContext(t)
	if err := r.SetRoleLabels(ctx, g, "a"); err != nil {
		t.Fatal(err)
	}
	healthy := func(name string) topology.SiteView {
		return topology.SiteView{Name: name, State: v1alpha1.StateReadOnly,
			Replication: topology.Replication{Running: true, Lag: time.Second}}
	}
	views := func(c func(*topology.SiteView)) []topology.SiteView {
		b := healthy("b")
		if c != nil {
			c(&b)
		}
		d := healthy("d")
		d.Role = v1alpha1.RoleDROnly
		return []topology.SiteView{{Name: "a", State: v1alpha1.StateWritable}, b, healthy("c"), d}
	}
	steps := []struct {
		name        string
		b           func(*topology.SiteView)
		wantReplica []string
		wantAny     []string
		wantChanged []string
	}{
		{"all healthy", nil, []string{"b", "c"}, []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"b diverged", func(s *topology.SiteView) { s.Diverged = true }, []string{"c"}, []string{"a", "c"}, []string{"b"}},
		{"b healthy again", nil, []string{"b", "c"}, []string{"a", "b", "c"}, []string{"b"}},
		{"b fenced by an administrator", func(s *topology.SiteView) { s.AdminFenced = true }, []string{"c"}, []string{"a", "c"}, []string{"b"}},
		{"b unfenced", nil, []string{"b", "c"}, []string{"a", "b", "c"}, []string{"b"}},
		{"b lags past maxLagSeconds", func(s *topology.SiteView) { s.Replication.Lag = 31 * time.Second }, []string{"c"}, []string{"a", "c"}, []string{"b"}},
		{"b caught up", nil, []string{"b", "c"}, []string{"a", "b", "c"}, []string{"b"}},
		{"b stopped replicating", func(s *topology.SiteView) { s.Replication.Running = false }, []string{"c"}, []string{"a", "c"}, []string{"b"}},
		{"b unreachable", func(s *topology.SiteView) { s.State = v1alpha1.StateUnreachable }, []string{"c"}, []string{"a", "c"}, nil},
		{"b replicating again", nil, []string{"b", "c"}, []string{"a", "b", "c"}, []string{"b"}},
		{"nothing changed: nothing written", nil, []string{"b", "c"}, []string{"a", "b", "c"}, nil},
	}
	maxLag := time.Duration(g.Spec.Replication.MaxLagSeconds) * time.Second
	for _, st := range steps {
		before := podVersions(t, ns)
		routes := topology.ReadRoutes(topology.ReadRouteInput{Sites: views(st.b), Active: "a", MaxLag: maxLag})
		routable := map[string]bool{}
		for _, rt := range routes {
			routable[rt.Site] = rt.Routable
		}
		changed, err := r.SetReadRoutes(ctx, g, routable)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !slices.Equal(changed, st.wantChanged) {
			t.Errorf("%s: changed %v, want %v", st.name, changed, st.wantChanged)
		}
		if got := selected(t, ns, routing.ReplicasServiceName(g.Name)); !slices.Equal(got, st.wantReplica) {
			t.Errorf("%s: -replicas selects %v, want %v", st.name, got, st.wantReplica)
		}
		if got := selected(t, ns, routing.AnyServiceName(g.Name)); !slices.Equal(got, st.wantAny) {
			t.Errorf("%s: -any selects %v, want %v", st.name, got, st.wantAny)
		}
		if st.wantChanged == nil && !mapsEqual(before, podVersions(t, ns)) {
			t.Errorf("%s: Pods written although no label changed", st.name)
		}
	}
	// A failover to b: a is demoted and loses its read place in the same
	// patch, before any ReadRoutes judges it; -replicas never selects it.
	if err := r.SetRoleLabels(ctx, g, "b"); err != nil {
		t.Fatal(err)
	}
	if got := selected(t, ns, routing.ReplicasServiceName(g.Name)); slices.Contains(got, "a") {
		t.Errorf("the demoted primary is in -replicas: %v", got)
	}
	if got := selected(t, ns, routing.AnyServiceName(g.Name)); slices.Contains(got, "a") {
		t.Errorf("the demoted primary is in -any: %v", got)
	}
}

// TestRoleServicesTemplateAdditionalAndDisabled: the shared template is
// merged onto the defaults, an additional Service is patched onto its
// role's default or replaces it, the operator keeps selector and ports,
// and a disabled default or a removed additional Service is deleted.
func TestRoleServicesTemplateAdditionalAndDisabled(t *testing.T) {
	ns := newNamespace(t)
	services := map[string]any{
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"team": "shop", v1alpha1.LabelGroup: "hijack"},
				"annotations": map[string]any{"example.com/scheme": "internal"}},
			"spec": map[string]any{"type": "NodePort", "sessionAffinity": "ClientIP"},
		},
		"additional": []any{
			map[string]any{"name": "lb", "selectorType": "rw",
				"serviceTemplate": map[string]any{"spec": map[string]any{"type": "LoadBalancer",
					"loadBalancerSourceRanges": []any{"10.0.0.0/8"}}}},
			map[string]any{"name": "reporting", "selectorType": "ro", "updateStrategy": "replace",
				"serviceTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"pool": "reporting"}}}},
		},
	}
	g := createGroup(t, ns, "svc", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}},
		map[string]any{"services": services})
	r := newRouter()
	converge(t, r, g)
	svc := func(name string) *corev1.Service {
		var s corev1.Service
		get(t, ns, name, &s)
		return &s
	}
	prim := svc(routing.PrimaryServiceName(g.Name))
	if prim.Spec.Type != corev1.ServiceTypeNodePort || prim.Spec.SessionAffinity != corev1.ServiceAffinityClientIP ||
		prim.Labels["team"] != "shop" || prim.Annotations["example.com/scheme"] != "internal" {
		t.Errorf("-primary did not take the template: type %s affinity %s labels %v annotations %v",
			prim.Spec.Type, prim.Spec.SessionAffinity, prim.Labels, prim.Annotations)
	}
	if prim.Labels[v1alpha1.LabelGroup] != g.Name || prim.Spec.Selector[v1alpha1.LabelRole] != v1alpha1.RolePrimary {
		t.Errorf("-primary's operator labels or selector were overridden: labels %v selector %v", prim.Labels, prim.Spec.Selector)
	}
	anySvc := svc(routing.AnyServiceName(g.Name))
	if anySvc.Spec.Type != corev1.ServiceTypeNodePort || anySvc.Spec.Selector[v1alpha1.LabelRoutable] != routing.RoutableValue {
		t.Errorf("-any: type %s selector %v", anySvc.Spec.Type, anySvc.Spec.Selector)
	}
	lb := svc(g.Name + "-lb")
	if lb.Spec.Type != corev1.ServiceTypeLoadBalancer || lb.Labels["team"] != "shop" ||
		lb.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || !slices.Equal(lb.Spec.LoadBalancerSourceRanges, []string{"10.0.0.0/8"}) ||
		lb.Spec.Selector[v1alpha1.LabelRole] != v1alpha1.RolePrimary {
		t.Errorf("patched additional Service: type %s labels %v affinity %s ranges %v selector %v",
			lb.Spec.Type, lb.Labels, lb.Spec.SessionAffinity, lb.Spec.LoadBalancerSourceRanges, lb.Spec.Selector)
	}
	rep := svc(g.Name + "-reporting")
	if rep.Spec.Type != corev1.ServiceTypeClusterIP || rep.Labels["team"] != "" || rep.Labels["pool"] != "reporting" ||
		rep.Spec.Selector[v1alpha1.LabelRole] != v1alpha1.RoleReplica || rep.Spec.Selector[v1alpha1.LabelRoutable] != routing.RoutableValue {
		t.Errorf("replaced additional Service: type %s labels %v selector %v", rep.Spec.Type, rep.Labels, rep.Spec.Selector)
	}
	for _, s := range []*corev1.Service{prim, anySvc, lb, rep} {
		checkOwned(t, s, g)
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != routing.MySQLPort {
			t.Errorf("%s ports %v, want the mysql port only", s.Name, s.Spec.Ports)
		}
	}

	// The template is dropped and -any disabled, the reporting Service removed.
	g.Spec.Services = &v1alpha1.ServicesSpec{DisabledDefaultServices: []v1alpha1.ServiceKind{v1alpha1.ServiceR},
		Additional: g.Spec.Services.Additional[:1]}
	converge(t, r, g)
	if prim := svc(routing.PrimaryServiceName(g.Name)); prim.Spec.Type != corev1.ServiceTypeClusterIP || prim.Labels["team"] != "" {
		t.Errorf("-primary kept the dropped template: type %s labels %v", prim.Spec.Type, prim.Labels)
	}
	for _, name := range []string{routing.AnyServiceName(g.Name), g.Name + "-reporting"} {
		err := cp.Client.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: %v, want deleted", name, err)
		}
	}
	svc(routing.ReplicasServiceName(g.Name))
	svc(routing.SiteName(g.Name, "a")) // a site's own Service is never pruned
	svc(g.Name + "-lb")
}
