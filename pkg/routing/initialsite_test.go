package routing

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestInitialSite: a recorded active site wins; a new group starts on
// topology's bootstrap choice.
func TestInitialSite(t *testing.T) {
	sites := []v1alpha1.Site{{Name: "iad", Role: v1alpha1.RoleDROnly}, {Name: "pdx"}, {Name: "fra"}}
	cases := []struct {
		name   string
		active string
		want   string
	}{
		{"new group: the first primary-candidate", "", "pdx"},
		{"recorded active site wins", "fra", "fra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &v1alpha1.MysqlFailoverGroup{Spec: v1alpha1.MysqlFailoverGroupSpec{Sites: sites},
				Status: v1alpha1.MysqlFailoverGroupStatus{ActiveSite: c.active}}
			if got := InitialSite(g); got != c.want {
				t.Fatalf("InitialSite = %q, want %q", got, c.want)
			}
		})
	}
}
