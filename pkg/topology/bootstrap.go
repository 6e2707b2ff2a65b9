package topology

import "github.com/shipstream/bloodraven/apis/v1alpha1"

// BootstrapSite is the site a new group starts on (generation 1, before any
// site was observed): the first primary-candidate site in spec order, which
// is also priority order. It is empty when no site may be primary. A group
// that later lost its authority is not bootstrapped again: Decide resolves
// its active site (authority), preferring the sites that write.
func BootstrapSite(sites []v1alpha1.Site) string {
	for _, s := range sites {
		if primaryCandidate(s.Role) {
			return s.Name
		}
	}
	return ""
}

// primaryCandidate reports whether a site of role r may be made primary;
// the empty role means primary-candidate.
func primaryCandidate(r v1alpha1.SiteRole) bool {
	return r == "" || r == v1alpha1.RolePrimaryCandidate
}
