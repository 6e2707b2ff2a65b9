package topology

import (
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The administrator fence. An administrator takes sites out of service
// (the group's v1alpha1.FencedSitesAnnotation; the caller marks their views
// SiteView.AdminFenced). An admin-fenced site is never promoted nor
// re-asserted (gatePromotion); no other site is promoted because of the
// fence. An admin-fenced active site that still writes is to be fenced by
// SQL (adminFenceActive) and the group waits, not Ready, until the fence is
// lifted; then the ordinary re-assertion makes it writable again.

// adminFenceActive is the decision for a writable active site an
// administrator fenced: fence it (Fence, AdminFence) and report the
// re-assertion blocked by the fence. It does not apply while a failover or
// a planned failover holds the topology, nor without a recorded active site.
func adminFenceActive(in Input, a SiteView) (Decision, bool) {
	if !a.AdminFenced || a.State != v1alpha1.StateWritable || in.ActiveSite == "" || in.InFlight != nil ||
		in.PlannedInFlight {
		return Decision{}, false
	}
	return Decision{Kind: KindFailoverBlocked, Reason: v1alpha1.ReasonAdminFenced, Wanted: KindNoPrimary,
		Target: a.Name, Fence: []string{a.Name}, AdminFence: true,
		Message: fmt.Sprintf("active site %s is fenced by an administrator (%s): it is made read-only and no other site is promoted",
			a.Name, v1alpha1.FencedSitesAnnotation)}, true
}
