package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func inFlight(in Input, from, to string) Input {
	in.InFlight = &Intent{From: from, To: to, Generation: in.Generation}
	return in
}

func role(s SiteView, r v1alpha1.SiteRole) SiteView {
	return with(s, func(v *SiteView) { v.Role = r })
}

func TestDecideFailover(t *testing.T) {
	lostA := confirmed(down("a"))
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"primary lost and confirmed fenced: promote the replica", group("a", lostA, ro("b", "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"old primary not confirmed fenced: blocked, candidate named", group("a", down("a"), ro("b", "A:1-10")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "b", unconfirmed: []string{"a"}, wanted: KindFailover}},
		{"another unreachable site not confirmed fenced blocks too", group("a", lostA, ro("b", "A:1-10"), down("c")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "b", unconfirmed: []string{"c"}, wanted: KindFailover}},
		{"within the cooldown: blocked", afterFailover(group("a", lostA, ro("b", "A:1-10")), "b", "a", 4*time.Minute),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonCooldown, wanted: KindFailover}},
		{"cooldown over: promote", afterFailover(group("a", lostA, ro("b", "A:1-10")), "b", "a", 5*time.Minute),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"planned failover in flight: blocked", withPlanned(group("a", lostA, ro("b", "A:1-10"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, wanted: KindFailover}},
		{"only candidate unreachable: no candidate", group("a", lostA, down("b"), role(ro("c", "A:1"), v1alpha1.RoleDROnly)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"only replica not observed yet: no candidate", group("a", lostA, unk("b")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"dr-only replica is never a candidate", group("a", lostA, role(ro("b", "A:1-10"), v1alpha1.RoleDROnly)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"read-only role is never a candidate", group("a", lostA, role(ro("b", "A:1-10"), v1alpha1.RoleReadOnly)),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
		{"empty role means primary-candidate", group("a", lostA, role(ro("b", "A:1-10"), "")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"administrator-fenced replica is excluded", group("a", lostA,
			with(ro("b", "A:1-10"), func(s *SiteView) { s.AdminFenced = true }), ro("c", "A:1-8")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"diverged replica is excluded even when freshest", group("a", lostA,
			ro("b", "A:1-8"), with(ro("c", "A:1-10,C:1"), func(s *SiteView) { s.Diverged = true })),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"freshest superset wins over priority", group("a", lostA, ro("b", "A:1-8"), ro("c", "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"equal sets: spec order wins", group("a", lostA, ro("b", "A:1-10"), ro("c", "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"incomparable sets: blocked, divergent GTIDs named", group("a", lostA, ro("b", "A:1-10,B:1"), ro("c", "A:1-11")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonDivergence, target: "b", divergent: []string{"c"}, wanted: KindFailover}},
		{"a fresher dr-only site does not block the candidate", group("a", lostA, ro("b", "A:1-8"),
			role(ro("c", "A:1-10"), v1alpha1.RoleDROnly)),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "b"}},
		{"promotion of a failover in flight", inFlight(group("b", lostA, ro("b", "A:1-10")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonFailoverRunning, target: "b"}},
		{"failover in flight: a diverged target is replaced", inFlight(group("b", lostA,
			with(ro("b", "A:1-10,B:1"), func(s *SiteView) { s.Diverged = true }), ro("c", "A:1-9")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"failover in flight: an administrator-fenced target is replaced", inFlight(group("b", lostA,
			with(ro("b", "A:1-10"), func(s *SiteView) { s.AdminFenced = true }), ro("c", "A:1-10")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"failover in flight: a fresher site that appeared wins", inFlight(group("b", lostA, ro("b", "A:1-8"), ro("c", "A:1-10")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
		{"failover in flight: an incomparable site that appeared blocks", inFlight(group("b", lostA, ro("b", "A:1-8,B:1"), ro("c", "A:1-10")), "a", "b"),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonDivergence, target: "c", divergent: []string{"b"}, wanted: KindFailover}},
		{"failover in flight: an equally fresh site does not move the target", inFlight(group("c", lostA, ro("b", "A:1-10"), ro("c", "A:1-10")), "a", "c"),
			want{kind: KindFailover, reason: v1alpha1.ReasonFailoverRunning, target: "c"}},
		{"failover in flight waits for the old primary's fence", inFlight(group("b", down("a"), ro("b", "A:1-10")), "a", "b"),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "b", unconfirmed: []string{"a"}, wanted: KindFailover}},
		{"failover in flight is held by the planned guard", withPlanned(inFlight(group("b", lostA, ro("b", "A:1")), "a", "b")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, target: "b", wanted: KindFailover}},
		{"target lost mid-failover: retarget, cooldown does not apply",
			inFlight(afterFailover(group("b", lostA, confirmed(down("b")), ro("c", "A:1-9")), "c", "a", time.Minute), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

func TestDecideCooldownRetryAfter(t *testing.T) {
	in := afterFailover(group("a", confirmed(down("a")), ro("b", "A:1")), "b", "a", time.Minute)
	d := assertDecision(t, in, want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonCooldown, wanted: KindFailover})
	if want := t0.Add(4 * time.Minute); !d.RetryAfter.Equal(want) {
		t.Fatalf("RetryAfter = %v, want %v", d.RetryAfter, want)
	}
}

func TestSelectCandidateDivergentGTIDs(t *testing.T) {
	c := SelectCandidate([]SiteView{ro("a", "A:1-10,B:1-2"), ro("b", "A:1-13"), ro("c", "A:1-9")})
	if c.Site != "" || len(c.Divergent) != 1 || c.Freshest != "b" {
		t.Fatalf("got %+v, want no site and one divergence", c)
	}
	// b has the most transactions; promoting it would lose a's B:1-2.
	if dv := c.Divergent[0]; dv.Site != "a" || !dv.GTIDs.Equal(set("B:1-2")) {
		t.Fatalf("divergence %s=%s, want a=%s", dv.Site, dv.GTIDs, set("B:1-2"))
	}
	if c := SelectCandidate([]SiteView{down("a"), unk("b")}); c.Site != "" || len(c.Divergent) != 0 {
		t.Fatalf("got %+v, want nothing eligible", c)
	}
}
