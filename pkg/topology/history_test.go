package topology

import (
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// sid gives a site the source id its own server writes under.
func sid(s SiteView, id string) SiteView { return with(s, func(v *SiteView) { v.ServerID = id }) }

func stale(s SiteView) SiteView { return with(s, func(v *SiteView) { v.Stale = true }) }

// promotedAt records the last failover's promotion set.
func promotedAt(in Input, executed string) Input { in.Promoted = set(executed); return in }

// lostIn records what the newest failover of the history lost.
func lostIn(in Input, lost string) Input {
	in.History[len(in.History)-1].Lost = set(lost)
	return in
}

// Issue 13, path 2: a re-assert only when the active site holds every
// transaction of its own source id that another site holds.
func TestDecideReassertJudgedByGTIDs(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"active lost its own tail that a replica received: fail over to the replica",
			group("a", sid(ro("a", "A:1-10"), uuidA), ro("b", "A:1-12")),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "b"}},
		{"active holds all of its own transactions: another server's errant write does not stop the re-assert",
			group("a", sid(ro("a", "A:1-10"), uuidA), ro("b", "A:1-10,B:1")),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
		{"active source id unknown: it must hold everything the others hold",
			group("a", ro("a", "A:1-10"), ro("b", "A:1-10,B:1")),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "b"}},
		{"only a dr-only site holds the lost tail: blocked, never re-asserted",
			group("a", sid(ro("a", "A:1-10"), uuidA), role(ro("b", "A:1-12"), v1alpha1.RoleDROnly)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonReassertUnsafe, target: "a", wanted: KindNoPrimary}},
		{"lost tail within the cooldown: blocked by the cooldown, not re-asserted",
			afterFailover(group("a", sid(ro("a", "A:1-10"), uuidA), ro("b", "A:1-12")), "b", "a", time.Minute),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonCooldown, wanted: KindFailover}},
		{"the site holding the lost tail lacks the active's other transactions: blocked, divergence named",
			group("a", sid(ro("a", "A:1-10,C:1"), uuidA), ro("b", "A:1-12")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonDivergence, target: "b", divergent: []string{"a"}, wanted: KindFailover}},
		{"a diverged site's copy of the tail does not count",
			group("a", sid(ro("a", "A:1-10"), uuidA), with(ro("b", "A:1-12,B:1"), func(s *SiteView) { s.Diverged = true })),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
		{"an unreachable site's last known set counts, and it must be confirmed fenced",
			group("a", sid(ro("a", "A:1-10"), uuidA), with(confirmed(down("b")), func(s *SiteView) { s.Executed = set("A:1-12") }), ro("c", "A:1-12")),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "c"}},
		{"an administrator-fenced active site lacking its tail: no other site is promoted either",
			group("a", with(sid(ro("a", "A:1-10"), uuidA), func(s *SiteView) { s.AdminFenced = true }), ro("b", "A:1-12")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", wanted: KindNoPrimary}},
		{"a planned failover holds an active site lacking its tail",
			withPlanned(group("a", sid(ro("a", "A:1-10"), uuidA), ro("b", "A:1-12"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, target: "a", wanted: KindNoPrimary}},
		{"stale active GTIDs: wait for a fresh probe",
			group("a", stale(sid(ro("a", "A:1-12"), uuidA)), ro("b", "A:1-12")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNotReady, target: "a", wanted: KindNoPrimary}},
		{"mariadb: active lost its tail",
			group("a", sid(ro("a", "0-1:1-100"), "0-1"), ro("b", "0-1:1-102")),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "b"}},
		{"mariadb: a lagging replica after a failback does not stop the re-assert",
			group("a", sid(ro("a", "0-2:1-150,0-1:151-200"), "0-1"), ro("b", "0-1:1-100,0-2:101-150")),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

// Issue 13, path 3: a site holding transactions outside the authority's
// history (outside the last promotion set and not its writer's, or in an
// earlier failover's lost set) is never eligible, and is reported whatever
// the decision.
func TestDecideHistoryErrant(t *testing.T) {
	// a was the primary, isolated after A:10; b was promoted with A:1-10 and wrote B:1-5.
	afterAB := func(in Input) Input { return promotedAt(afterFailover(in, "a", "b", time.Hour), "A:1-10") }
	bDown := sid(confirmed(down("b")), uuidB)
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"the isolated former primary's acknowledged tail: never promoted",
			afterAB(group("b", sid(ro("a", "A:1-15"), uuidA), bDown)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover, errant: []string{"a"}}},
		{"a replica of the new primary is promoted, the former primary is reported",
			afterAB(group("b", sid(ro("a", "A:1-15"), uuidA), bDown, ro("c", "A:1-10,B:1-5"))),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c", errant: []string{"a"}}},
		{"reported in a pass blocked on an unconfirmed fence too",
			afterAB(group("b", sid(ro("a", "A:1-15"), uuidA), sid(down("b"), uuidB), ro("c", "A:1-10,B:1-5"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "c", unconfirmed: []string{"b"},
				wanted: KindFailover, errant: []string{"a"}}},
		{"reported while the new primary writes",
			afterAB(group("b", sid(ro("a", "A:1-15"), uuidA), sid(wr("b", "A:1-10,B:1-5"), uuidB))),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"a"}, errant: []string{"a"}}},
		{"a replica's own errant write after the promotion",
			afterAB(group("b", sid(wr("b", "A:1-10,B:1-5"), uuidB), ro("c", "A:1-10,B:1-5,C:1"))),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"c"}, errant: []string{"c"}}},
		{"the new primary held nothing when promoted: the former primary's writes are errant (recorded empty set)",
			func() Input {
				in := afterFailover(group("b", sid(ro("a", "A:1-5"), uuidA), sid(confirmed(down("b")), uuidB), ro("c", "B:1-3")), "a", "b", time.Hour)
				in.PromotedKnown = true
				return in
			}(),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c", errant: []string{"a"}}},
		{"an earlier failover's lost set, without a promotion set",
			lostIn(afterFailover(group("b", sid(ro("a", "A:1-12"), uuidA), bDown, ro("c", "A:1-10")), "a", "b", time.Hour), "A:11-12"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c", errant: []string{"a"}}},
		{"an older failover's lost set still counts after a newer failover",
			func() Input {
				in := afterFailover(group("c", sid(ro("a", "A:1-12"), uuidA), sid(ro("b", "A:1-10,B:1-3"), uuidB),
					sid(confirmed(down("c")), uuidC)), "a", "b", 2*time.Hour)
				in = lostIn(in, "A:11-12")
				return promotedAt(afterFailover(in, "b", "c", time.Hour), "A:1-10,B:1-3")
			}(),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b", errant: []string{"a"}}},
		{"the writer's source id is unknown: nobody is marked, nobody outside the promotion set is promoted",
			afterAB(group("b", sid(ro("a", "A:1-15"), uuidA), confirmed(down("b")), ro("c", "A:1-10,B:1-5"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"a lagging replica within the history is eligible",
			afterAB(group("b", bDown, ro("c", "A:1-8"))),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"a read-only active site outside the history is not re-asserted",
			promotedAt(afterFailover(group("a", sid(ro("a", "A:1-10,C:1"), uuidA), ro("b", "A:1-10")), "b", "a", time.Hour), "A:1-5"),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "b", errant: []string{"a"}}},
		{"a stale observation makes a site ineligible but is not reported",
			afterAB(group("b", stale(sid(ro("a", "A:1-15"), uuidA)), bDown)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"mariadb: a failback's history is not errant",
			promotedAt(afterFailover(group("a", sid(wr("a", "0-2:1-150,0-1:151-200"), "0-1"),
				sid(ro("b", "0-2:1-150,0-1:151-190"), "0-2")), "b", "a", time.Hour), "0-1:1-100,0-2:101-150"),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"mariadb: the isolated former primary's tail",
			promotedAt(afterFailover(group("b", sid(ro("a", "0-1:1-105"), "0-1"), sid(confirmed(down("b")), "0-2"),
				ro("c", "0-1:1-100,0-2:101-150")), "a", "b", time.Hour), "0-1:1-100"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c", errant: []string{"a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

func TestDecideHistoryErrantNamesTheTransactions(t *testing.T) {
	in := promotedAt(afterFailover(group("b", sid(ro("a", "A:1-15"), uuidA), sid(confirmed(down("b")), uuidB)),
		"a", "b", time.Hour), "A:1-10")
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errant) != 1 || !d.Errant[0].GTIDs.Equal(set("A:11-15")) {
		t.Fatalf("errant %v, want a=%s", d.Errant, set("A:11-15"))
	}
	if !strings.Contains(d.Message, "a is diverged") {
		t.Fatalf("message %q does not say why a is not a candidate", d.Message)
	}
}

func sqlFailed(s SiteView, retrieved string) SiteView {
	return with(s, func(v *SiteView) {
		v.Replication.Running, v.Replication.SQLError = false, true
		v.Replication.Error = "SQL thread error 1062: duplicate key"
		v.Replication.Retrieved = set(retrieved)
	})
}

// Issue 13, path 11: a site whose SQL thread stopped on an error is a
// candidate only when its relay log is fully applied.
func TestDecideBrokenReplicationCandidate(t *testing.T) {
	lostA := confirmed(down("a"))
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"SQL thread failed with received transactions unapplied: not a candidate",
			group("a", lostA, sqlFailed(ro("b", "A:1-10"), "A:1-12")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"SQL thread failed with the relay log fully applied: a candidate",
			group("a", lostA, sqlFailed(ro("b", "A:1-10"), "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"SQL thread failed after receiving nothing: a candidate",
			group("a", lostA, sqlFailed(ro("b", "A:1-10"), "")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"a fresher site that cannot apply what it received loses to a healthy one",
			group("a", lostA, sqlFailed(ro("b", "A:1-11"), "A:1-12"), ro("c", "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"what it received is unknown: not a candidate",
			group("a", lostA, with(sqlFailed(ro("b", "A:1-10"), ""), func(s *SiteView) { s.Replication.RetrievedUnknown = true })),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"an IO thread error alone does not exclude a candidate",
			group("a", lostA, with(ro("b", "A:1-10"), func(s *SiteView) {
				s.Replication.Running, s.Replication.Error = false, "IO thread error 2003: cannot connect"
			})),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"mariadb: IO position beyond the executed state",
			group("a", lostA, sqlFailed(ro("b", "0-1:1-100"), "0-1:1-102")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"mariadb: IO position applied, written by the domain's second server",
			group("a", lostA, sqlFailed(ro("b", "0-1:1-100,0-2:101-104"), "0-2:104")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"mariadb: IO position beyond the executed state, written by the domain's second server",
			group("a", lostA, sqlFailed(ro("b", "0-1:1-100,0-2:101-104"), "0-2:105")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"a failover in flight moves off a target whose SQL thread failed",
			inFlight(group("b", lostA, sqlFailed(ro("b", "A:1-10"), "A:1-12"), ro("c", "A:1-9")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
	d, _ := Decide(group("a", lostA, sqlFailed(ro("b", "A:1-10"), "A:1-12")))
	if !strings.Contains(d.Message, "received but not applied") {
		t.Fatalf("message %q does not say why b is not a candidate", d.Message)
	}
}

func TestJudgeFlagsWhatDecideSees(t *testing.T) {
	in := promotedAt(afterFailover(group("b", sid(ro("a", "A:1-15"), uuidA), sid(wr("b", "A:1-10,B:1-5"), uuidB),
		ro("c", "A:1-10,B:1-3")), "a", "b", time.Hour), "A:1-10")
	j := Judge(in)
	for _, s := range j.Sites {
		if s.Diverged != (s.Name == "a") {
			t.Fatalf("site %s diverged=%v", s.Name, s.Diverged)
		}
	}
	if in.Sites[0].Diverged {
		t.Fatal("Judge changed its argument's sites")
	}
}

func TestJudgeLeavesBadInputToDecide(t *testing.T) {
	if got := Judge(Input{}); len(got.Sites) != 0 {
		t.Fatalf("Judge(empty) = %+v", got)
	}
}
