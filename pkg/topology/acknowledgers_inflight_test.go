package topology

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestRetargetWaitsForTheInFlightTargetAcknowledger: a failover a->b is in
// flight (status.activeSite is already b) and b, the replica that
// acknowledged a's commits under dataDurability required, stops answering
// before it is promoted (confirmed unable to write, e.g. its sidecar reports
// mysqld gone). decideFailover is entered with a = b and passes a.Name as
// the source whose commits are at stake, so b itself is excluded from
// unreadAcknowledgers: the failover is retargeted to c, which lacks what b
// acknowledged. The source is the in-flight intent's From (a), and b may
// hold acknowledged commits: the promotion must wait (or b be bounded).
func TestRetargetWaitsForTheInFlightTargetAcknowledger(t *testing.T) {
	lostA := confirmed(down("a"))
	b := with(confirmed(down("b")), func(v *SiteView) { v.MayAcknowledge = true })
	in := inFlightAt(group("b", lostA, b, ro("c", "A:1-8")), "a", "b", v1alpha1.StepFencing)
	assertDecision(t, in, want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAcknowledgerUnread,
		target: "c", wanted: KindFailover})
}
