package install

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestManifest(t *testing.T) {
	g := Group{Namespace: "default", Name: "orders", Sites: []string{"iad", "pdx"}, Hostname: "orders.bloodraven.test",
		Spec: "  mysql: {flavor: mariadb}\n  failoverCooldown: 30s\n"}
	var mg v1alpha1.MysqlFailoverGroup
	if err := yaml.UnmarshalStrict([]byte(g.Manifest()), &mg); err != nil {
		t.Fatalf("manifest does not decode: %v\n%s", err, g.Manifest())
	}
	if mg.Kind != "MysqlFailoverGroup" || mg.APIVersion != v1alpha1.GroupVersion.String() || mg.Namespace != "default" || mg.Name != "orders" {
		t.Errorf("object: %+v", mg.TypeMeta)
	}
	s := mg.Spec
	if len(s.Sites) != 2 || s.Sites[0].Name != "iad" || s.Sites[0].Zone != "iad" || s.Sites[1].Name != "pdx" {
		t.Errorf("sites: %+v", s.Sites)
	}
	if s.DNS == nil || s.DNS.Hostname != "orders.bloodraven.test" || s.MySQL.Flavor != "mariadb" {
		t.Errorf("dns %+v, mysql %+v", s.DNS, s.MySQL)
	}
}

func TestHealthy(t *testing.T) {
	group := func(active string, ready, degraded bool, sites ...v1alpha1.SiteStatus) *v1alpha1.MysqlFailoverGroup {
		mg := &v1alpha1.MysqlFailoverGroup{}
		mg.Spec.Sites = []v1alpha1.Site{{Name: "iad"}, {Name: "pdx"}}
		mg.Status.ActiveSite, mg.Status.TopologyGeneration, mg.Status.Sites = active, 1, sites
		status := map[bool]metav1.ConditionStatus{true: metav1.ConditionTrue, false: metav1.ConditionFalse}
		mg.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: status[ready]}, {Type: "Degraded", Status: status[degraded]}}
		return mg
	}
	writable := v1alpha1.SiteStatus{Name: "iad", State: v1alpha1.StateWritable}
	replica := v1alpha1.SiteStatus{Name: "pdx", State: v1alpha1.StateReadOnly, Replicating: true}
	stopped := v1alpha1.SiteStatus{Name: "pdx", State: v1alpha1.StateReadOnly}
	cases := []struct {
		name string
		mg   *v1alpha1.MysqlFailoverGroup
		ok   bool
	}{
		{"healthy", group("iad", true, false, writable, replica), true},
		{"other site active", group("pdx", true, false, writable, replica), false},
		{"not ready", group("iad", false, false, writable, replica), false},
		{"degraded", group("iad", true, true, writable, replica), false},
		{"replica not replicating", group("iad", true, false, writable, stopped), false},
		{"a site missing", group("iad", true, false, writable), false},
	}
	for _, tc := range cases {
		if err := Healthy(tc.mg, "iad"); (err == nil) != tc.ok {
			t.Errorf("%s: Healthy = %v", tc.name, err)
		}
	}
	if err := Ready(group("iad", true, false), "iad", 2); err == nil {
		t.Error("Ready accepted generation 1 for 2")
	}
}

func TestCountList(t *testing.T) {
	if got := countList(map[string]int{"pdx": 2, "iad": 10}); got != "iad 10, pdx 2" {
		t.Errorf("countList = %q", got)
	}
}
