package topology

import (
	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Followers lists, in spec order, the sites to point at target once it was
// made writable holding promoted (a failover's last steps): every other site
// the snapshot saw read-only that is not diverged and holds nothing promoted
// lacks. A site holding more would replicate on top of transactions the new
// primary never had; it is left for the divergence report.
func Followers(in Input, target string, promoted gtid.Set) []string {
	return names(in.Sites, func(s SiteView) bool {
		return s.Name != target && s.State == v1alpha1.StateReadOnly && !s.Diverged &&
			gtid.Lacks(promoted, s.Executed).IsEmpty()
	})
}
