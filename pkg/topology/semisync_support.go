package topology

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// SemiSyncSupport is whether one site's server can take part in semi-sync
// replication, as its last answered probe showed it.
type SemiSyncSupport struct {
	Site string
	// Observed is false when the site never answered a probe.
	Observed bool
	// Missing names what the server lacks ("" when nothing): on MySQL the
	// semisync_source and semisync_replica plugins.
	Missing string
}

// SemiSyncAvailability is the SemiSyncUnavailable condition: true, with
// the sites and what each lacks, when semi-sync is on and a site that
// answered cannot take part in it. A site that never answered says
// nothing either way. Under required such a site is never made writable
// (its source part cannot be set), and as a replica it never acknowledges;
// under preferred its commits, once it is the primary, wait for nothing.
func SemiSyncAvailability(enabled, required bool, sites []SemiSyncSupport) (bool, string, string) {
	if !enabled {
		return false, v1alpha1.ReasonSemiSyncOff, "semi-sync replication is off (spec.mysql.semiSync.enabled)"
	}
	var lacking []string
	for _, s := range sites {
		if s.Observed && s.Missing != "" {
			lacking = append(lacking, s.Site+" lacks "+s.Missing)
		}
	}
	if len(lacking) == 0 {
		return false, v1alpha1.ReasonSemiSyncAvailable, "every site that answered has semi-sync replication"
	}
	effect := "such a site acknowledges nothing as a replica, and as the primary its commits wait for no replica"
	if required {
		effect = "under dataDurability required such a site is never made writable, and acknowledges nothing as a replica"
	}
	return true, v1alpha1.ReasonSemiSyncPluginMissing, fmt.Sprintf(
		"semi-sync is on but %s: %s; load the plugins (the rendered my.cnf does)", strings.Join(lacking, "; "), effect)
}
