//go:build envtest

package routing_test

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// createPods makes one Pod per site with the labels the site's Deployment
// template gives, as the Deployment controller would (envtest runs none).
func createPods(t *testing.T, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	for _, s := range g.Spec.Sites {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%s-0", g.Name, s.Name), Namespace: g.Namespace,
				Labels: map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelSite: s.Name,
					v1alpha1.LabelRole: v1alpha1.RoleReplica, "unrelated": "kept"},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysqld", Image: "mariadb:10.11"}}},
		}
		if err := cp.Client.Create(testContext(t), p); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
}

// selected lists the Pods a Service's selector picks, by site.
func selected(t *testing.T, ns, service string) []string {
	t.Helper()
	var svc corev1.Service
	get(t, ns, service, &svc)
	var pods corev1.PodList
	if err := cp.Client.List(testContext(t), &pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, p := range pods.Items {
		sites = append(sites, p.Labels[v1alpha1.LabelSite])
		if p.Labels["unrelated"] != "kept" {
			t.Errorf("pod %s lost an unrelated label: %v", p.Name, p.Labels)
		}
	}
	slices.Sort(sites)
	return sites
}

func podVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	var pods corev1.PodList
	if err := cp.Client.List(testContext(t), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.ResourceVersion
	}
	return out
}

func TestSetRoleLabelsFlipsPods(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "shop", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc"}}, nil)
	r := newRouter()
	converge(t, r, g)
	createPods(t, g)
	steps := []struct {
		name              string
		primary           string
		wantPrim, wantRep []string
	}{
		{"a becomes primary", "a", []string{"a"}, []string{"b", "c"}},
		{"failover to b", "b", []string{"b"}, []string{"a", "c"}},
		{"drain: no primary, the former one serves nothing", "", nil, []string{"a", "c"}},
		{"planned failover completes on c", "c", []string{"c"}, []string{"a", "b"}},
	}
	allRoutable := map[string]bool{"a": true, "b": true, "c": true}
	for _, st := range steps {
		if err := r.SetRoleLabels(testContext(t), g, st.primary); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if _, err := r.SetReadRoutes(testContext(t), g, allRoutable); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := selected(t, ns, routing.PrimaryServiceName(g.Name)); !slices.Equal(got, st.wantPrim) {
			t.Errorf("%s: -primary selects %v, want %v", st.name, got, st.wantPrim)
		}
		if got := selected(t, ns, routing.ReplicasServiceName(g.Name)); !slices.Equal(got, st.wantRep) {
			t.Errorf("%s: -replicas selects %v, want %v", st.name, got, st.wantRep)
		}
	}
	before := podVersions(t, ns)
	if err := r.SetRoleLabels(testContext(t), g, "c"); err != nil {
		t.Fatal(err)
	}
	if after := podVersions(t, ns); !mapsEqual(before, after) {
		t.Errorf("repeating SetRoleLabels wrote Pods: %v -> %v", before, after)
	}
	if err := r.SetRoleLabels(testContext(t), g, "nowhere"); err == nil {
		t.Errorf("SetRoleLabels to an unknown site: no error")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func dnsTargets(t *testing.T, g *v1alpha1.MysqlFailoverGroup) (targets []string, rv string) {
	t.Helper()
	var ep externaldns.DNSEndpoint
	get(t, g.Namespace, routing.DNSEndpointName(g.Name), &ep)
	return ep.Spec.Endpoints[0].Targets, ep.ResourceVersion
}

func clusterIP(t *testing.T, g *v1alpha1.MysqlFailoverGroup, s string) string {
	t.Helper()
	var svc corev1.Service
	get(t, g.Namespace, routing.SiteName(g.Name, s), &svc)
	return svc.Spec.ClusterIP
}

func TestPointDNS(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "pay", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc", lbIP: "198.51.100.9"}},
		map[string]any{"dns": map[string]any{"hostname": "pay.example.com"}})
	r := newRouter()
	converge(t, r, g)
	ctx := testContext(t)
	steps := []struct {
		site        string
		want        string
		wantChanged bool
	}{
		{"a", clusterIP(t, g, "a"), false}, // Converge already pointed it at the first candidate
		{"b", clusterIP(t, g, "b"), true},
		{"b", clusterIP(t, g, "b"), false},
		{"c", "198.51.100.9", true}, // loadBalancerIP wins over the cluster IP
	}
	for _, st := range steps {
		_, rvBefore := dnsTargets(t, g)
		changed, err := r.PointDNS(ctx, g, st.site)
		if err != nil {
			t.Fatalf("PointDNS(%s): %v", st.site, err)
		}
		targets, rv := dnsTargets(t, g)
		if changed != st.wantChanged || !slices.Equal(targets, []string{st.want}) {
			t.Errorf("PointDNS(%s): changed %v targets %v, want %v %s", st.site, changed, targets, st.wantChanged, st.want)
		}
		if !changed && rv != rvBefore {
			t.Errorf("PointDNS(%s) reported no change but wrote: %s -> %s", st.site, rvBefore, rv)
		}
	}
	converge(t, r, g) // Converge keeps the target PointDNS set
	if targets, _ := dnsTargets(t, g); !slices.Equal(targets, []string{"198.51.100.9"}) {
		t.Errorf("Converge moved the DNS target to %v", targets)
	}
	g.Spec.DNS = nil
	if changed, err := r.PointDNS(ctx, g, "a"); changed || err != nil {
		t.Errorf("PointDNS without spec.dns: %v %v, want a no-op", changed, err)
	}
	converge(t, r, g)
	var ep externaldns.DNSEndpoint
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: g.Name}, &ep); err == nil {
		t.Errorf("DNSEndpoint still there after spec.dns was removed")
	}
}
