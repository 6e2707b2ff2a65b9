package grouploop

import (
	"slices"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// siteNames lists a group's sites in spec order.
func siteNames(g *v1alpha1.MysqlFailoverGroup) []string {
	out := make([]string, 0, len(g.Spec.Sites))
	for _, s := range g.Spec.Sites {
		out = append(out, s.Name)
	}
	return out
}

func hasSite(sites []string, site string) bool { return slices.Contains(sites, site) }
