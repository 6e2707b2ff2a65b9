package topology

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestDecideUnreadAcknowledger: under dataDurability required a site that
// may hold acknowledged commits (MayAcknowledge) and cannot be read keeps
// the failover's target read-only until it answers.
func TestDecideUnreadAcknowledger(t *testing.T) {
	lostA := confirmed(down("a"))
	acks := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.MayAcknowledge = true }) }
	recloned := func(s SiteView) SiteView {
		return with(s, func(v *SiteView) { v.AdminFenced, v.DataReplaced = true, true })
	}
	blockedBy := func(target string) want {
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAcknowledgerUnread, target: target, wanted: KindFailover}
	}
	promote := func(target string) want {
		return want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: target}
	}
	unpromotable := func(target string) want {
		return want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAcknowledgerUnpromotable, target: target, wanted: KindFailover}
	}
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"the acknowledger, fenced and unreachable, may hold what c lacks: blocked",
			group("a", lostA, acks(confirmed(down("b"))), ro("c", "A:1-8")), blockedBy("c")},
		{"the acknowledger answers: it is compared, the freshest promoted",
			group("a", lostA, acks(ro("b", "A:1-10")), ro("c", "A:1-8")), promote("b")},
		{"the acknowledger is the target itself",
			group("a", lostA, acks(ro("b", "A:1-10")), ro("c", "A:1-10")), promote("b")},
		{"an unreachable site never acknowledging does not block",
			group("a", lostA, confirmed(down("b")), ro("c", "A:1-8")), promote("c")},
		{"the acknowledger answers from a stale probe: blocked",
			group("a", lostA, acks(with(ro("b", "A:1-5"), func(v *SiteView) { v.Stale = true })), ro("c", "A:1-8")), blockedBy("c")},
		{"the old primary's own mark does not count",
			group("a", acks(lostA), ro("c", "A:1-8")), promote("c")},
		{"the acknowledger is recloned from Cloning on (data not relied on; another copy was proven): not waited for",
			group("a", lostA, ro("b", "A:1-10"), acks(recloned(confirmed(down("c"))))), promote("b")},
		{"an administrator fence alone is not a reclone: still waited for",
			group("a", lostA, ro("b", "A:1-10"), acks(with(confirmed(down("c")), func(v *SiteView) { v.AdminFenced = true }))),
			blockedBy("b")},
		// Issue 15, gap 6: a readable site that may not be promoted.
		{"an admin-fenced acknowledger ahead of the target: blocked",
			group("a", lostA, ro("b", "A:1-8"), acks(with(ro("c", "A:1-10"), func(v *SiteView) { v.AdminFenced = true }))),
			unpromotable("b")},
		{"an admin-fenced acknowledger holding no more than the target: promoted",
			group("a", lostA, ro("b", "A:1-10"), acks(with(ro("c", "A:1-10"), func(v *SiteView) { v.AdminFenced = true }))),
			promote("b")},
		{"a read-only-role acknowledger that received more than the target: blocked",
			group("a", lostA, ro("b", "A:1-8"), acks(with(ro("r", "A:1-8"), func(v *SiteView) {
				v.Role, v.Replication.Retrieved = v1alpha1.RoleReadOnly, set("A:1-10")
			}))), unpromotable("b")},
		{"an admin-fenced site never acknowledging (preferred): promoted",
			group("a", lostA, ro("b", "A:1-8"), with(ro("c", "A:1-10"), func(v *SiteView) { v.AdminFenced = true })),
			promote("b")},
		{"an admin-fenced diverged site: not counted",
			group("a", lostA, ro("b", "A:1-8"), acks(with(ro("c", "A:1-10"), func(v *SiteView) { v.AdminFenced, v.Diverged = true, true }))),
			promote("b")},
		{"in flight: the promotion waits for an admin-fenced acknowledger ahead",
			inFlight(group("b", lostA, ro("b", "A:1-8"), acks(with(ro("c", "A:1-10"), func(v *SiteView) { v.AdminFenced = true }))), "a", "b"),
			unpromotable("b")},
		{"failover in flight: its promotion waits for the acknowledger too",
			inFlight(group("c", lostA, acks(confirmed(down("b"))), ro("c", "A:1-8")), "a", "c"), blockedBy("c")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}
