package install

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Each semi-sync mode renders a spec the API types decode strictly, with
// the mode's settings; an unknown mode is refused.
func TestMySQLSpec(t *testing.T) {
	cases := []struct {
		name, flavor, mode string
		enabled            bool
		durability         v1alpha1.DataDurability
	}{
		{"default is off", "mariadb", "", false, ""},
		{"off", "mariadb", "off", false, ""},
		{"preferred", "mariadb", "preferred", true, v1alpha1.DurabilityPreferred},
		{"required without a flavor", "", "required", true, v1alpha1.DurabilityRequired},
	}
	for _, tc := range cases {
		line, err := MySQLSpec(tc.flavor, tc.mode)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		g := Group{Namespace: "default", Name: "orders", Sites: []string{"iad", "pdx"}, Spec: line}
		var mg v1alpha1.MysqlFailoverGroup
		if err := yaml.UnmarshalStrict([]byte(g.Manifest()), &mg); err != nil {
			t.Fatalf("%s: manifest does not decode: %v\n%s", tc.name, err, g.Manifest())
		}
		m := mg.Spec.MySQL
		if m.SemiSync.Enabled != tc.enabled || m.SemiSync.DataDurability != tc.durability ||
			string(m.Flavor) != tc.flavor || m.Storage.Size.String() != "1Gi" {
			t.Errorf("%s: mysql %+v", tc.name, m)
		}
	}
	if _, err := MySQLSpec("mariadb", "sometimes"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
