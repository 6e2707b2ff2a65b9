package topology

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestBootstrapSite: a new group starts on its first primary-candidate site
// in spec order; dr-only and read-only sites never start it.
func TestBootstrapSite(t *testing.T) {
	site := func(name string, r v1alpha1.SiteRole) v1alpha1.Site { return v1alpha1.Site{Name: name, Role: r} }
	cases := []struct {
		name  string
		sites []v1alpha1.Site
		want  string
	}{
		{"first site, primary-candidate", []v1alpha1.Site{site("a", v1alpha1.RolePrimaryCandidate), site("b", "")}, "a"},
		{"empty role means primary-candidate", []v1alpha1.Site{site("a", ""), site("b", v1alpha1.RolePrimaryCandidate)}, "a"},
		{"dr-only first: the next candidate", []v1alpha1.Site{site("a", v1alpha1.RoleDROnly), site("b", "")}, "b"},
		{"read-only first: the next candidate", []v1alpha1.Site{site("a", v1alpha1.RoleReadOnly),
			site("b", v1alpha1.RoleDROnly), site("c", v1alpha1.RolePrimaryCandidate)}, "c"},
		{"no candidate: none", []v1alpha1.Site{site("a", v1alpha1.RoleDROnly), site("b", v1alpha1.RoleReadOnly)}, ""},
		{"no sites: none", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BootstrapSite(c.sites); got != c.want {
				t.Fatalf("BootstrapSite = %q, want %q", got, c.want)
			}
		})
	}
}
