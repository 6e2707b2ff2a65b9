package topology

import (
	"errors"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TestParseRecloneRequest: the two forms, and every malformed value refused
// with ErrBadRecloneRequest rather than read loosely.
func TestParseRecloneRequest(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  RecloneRequest
		bad   bool
	}{
		{name: "prefix form", value: "b:0-2-15-1", want: RecloneRequest{Site: "b", Prefix: "0-2-15-1"}},
		{name: "a MySQL prefix keeps its colons", value: "b:3e11fa47-71ca-11e1:1-5",
			want: RecloneRequest{Site: "b", Prefix: "3e11fa47-71ca-11e1:1-5"}},
		{name: "confirm form", value: "b:confirm=orders", want: RecloneRequest{Site: "b", ConfirmGroup: "orders"}},
		{name: "cancel form", value: "b:cancel", want: RecloneRequest{Site: "b", Cancel: true}},
		{name: "empty", value: "", bad: true},
		{name: "no colon", value: "b", bad: true},
		{name: "no site", value: ":0-2-15", bad: true},
		{name: "nothing after the colon", value: "b:", bad: true},
		{name: "confirm names no group", value: "b:confirm=", bad: true},
		{name: "spaces are not trimmed", value: "b: 0-2-15-1", bad: true},
		{name: "a newline", value: "b:0-2-15\n", bad: true},
		{name: "a NUL", value: "b\x00:0-2-15", bad: true},
		{name: "non-ASCII", value: "b:0-2-1５", bad: true},
		{name: "too long", value: "b:" + strings.Repeat("1", maxRecloneValue), bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRecloneRequest(tc.value)
			if tc.bad {
				if !errors.Is(err, ErrBadRecloneRequest) {
					t.Fatalf("err = %v, want ErrBadRecloneRequest", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestDecideReclone: every refusal rule, and the accepted forms with their donor.
func TestDecideReclone(t *testing.T) {
	primary := wr("a", "A:1-10")
	base := func() Input {
		return group("a", primary, ro("b", "A:1-10"), with(ro("c", "A:1-8,C:1-3"), func(v *SiteView) { v.Diverged = true }))
	}
	const div = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3"
	ask := func(value string) RecloneAsk {
		return RecloneAsk{Group: "orders", Value: value, Divergent: map[string]string{"c": div}}
	}
	tests := []struct {
		name      string
		in        Input
		ask       RecloneAsk
		reason    string
		wantDonor Donor
	}{
		{name: "diverged site with the exact eight-character prefix", in: base(), ask: ask("c:3e11fa47"), wantDonor: Donor{Site: "b"}},
		{name: "diverged site with the whole set", in: base(), ask: ask("c:" + div), wantDonor: Donor{Site: "b"}},
		{name: "non-diverged site with confirm of its group", in: base(), ask: ask("b:confirm=orders"),
			wantDonor: Donor{Site: "a", Primary: true}},
		{name: "a short divergent set is repeated whole",
			in: base(), ask: RecloneAsk{Group: "orders", Value: "c:0-3-5", Divergent: map[string]string{"c": "0-3-5"}},
			wantDonor: Donor{Site: "b"}},
		{name: "malformed value", in: base(), ask: ask("c"), reason: v1alpha1.ReasonInvalidRequest},
		{name: "hostile value", in: base(), ask: ask("c:\x00\x01"), reason: v1alpha1.ReasonInvalidRequest},
		{name: "unknown site", in: base(), ask: ask("z:confirm=orders"), reason: v1alpha1.ReasonUnknownSite},
		{name: "the active site", in: base(), ask: ask("a:confirm=orders"), reason: v1alpha1.ReasonRecloneActiveSite},
		{name: "wrong prefix", in: base(), ask: ask("c:3e11fa48"), reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "prefix shorter than eight", in: base(), ask: ask("c:3e11fa4"), reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "a short divergent set cut shorter",
			in: base(), ask: RecloneAsk{Group: "orders", Value: "c:0-3-", Divergent: map[string]string{"c": "0-3-5"}},
			reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "missing prefix: confirm for a diverged site", in: base(), ask: ask("c:confirm=orders"), reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "a prefix for a site that is not diverged", in: base(), ask: ask("b:3e11fa47"), reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "confirm naming another group", in: base(), ask: ask("b:confirm=payments"), reason: v1alpha1.ReasonRecloneWrongPrefix},
		{name: "an emergency failover in flight",
			in:  with2(base(), func(in *Input) { in.InFlight = &Intent{From: "a", To: "b", Generation: 3} }),
			ask: ask("c:3e11fa47"), reason: v1alpha1.ReasonConcurrentOperation},
		{name: "a planned failover in flight", in: with2(base(), func(in *Input) { in.PlannedInFlight = true }),
			ask: ask("c:3e11fa47"), reason: v1alpha1.ReasonConcurrentOperation},
		{name: "another reclone running",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.Running = "b"; return a }(),
			reason: v1alpha1.ReasonConcurrentOperation},
		{name: "an ordered update running",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.Updating = true; return a }(),
			reason: v1alpha1.ReasonConcurrentOperation},
		{name: "the group wants a failover",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.Decided = KindFailover; return a }(),
			reason: v1alpha1.ReasonConcurrentOperation},
		{name: "the group's failover is blocked",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.Decided = KindFailoverBlocked; return a }(),
			reason: v1alpha1.ReasonConcurrentOperation},
		{name: "a site whose part of the last failover's loss is not read yet (its old primary, an abandoned target)",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.LossUnread = []string{"c"}; return a }(),
			reason: v1alpha1.ReasonRecloneLossUncounted},
		{name: "another site's failover loss not counted yet",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.LossUnread = []string{"b"}; return a }(),
			wantDonor: Donor{Site: "b"}},
		{name: "a degraded group serves",
			in: base(), ask: func() RecloneAsk { a := ask("c:3e11fa47"); a.Decided = KindDegraded; return a }(),
			wantDonor: Donor{Site: "b"}},
		{name: "cancel of the running reclone before its data is touched",
			in: base(), ask: func() RecloneAsk {
				a := ask("c:cancel")
				a.Running, a.RunningPhase = "c", v1alpha1.RecoveryPreservingData
				return a
			}()},
		{name: "cancel once cloning began",
			in: base(), ask: func() RecloneAsk {
				a := ask("c:cancel")
				a.Running, a.RunningPhase = "c", v1alpha1.RecoveryCloning
				return a
			}(), reason: v1alpha1.ReasonConcurrentOperation},
		{name: "cancel with no reclone running", in: base(), ask: ask("c:cancel"), reason: v1alpha1.ReasonRecloneNotRunning},
		{name: "cancel of another site's reclone",
			in: base(), ask: func() RecloneAsk {
				a := ask("b:cancel")
				a.Running, a.RunningPhase = "c", v1alpha1.RecoveryRequested
				return a
			}(),
			reason: v1alpha1.ReasonRecloneNotRunning},
		{name: "no healthy donor: the only replica is the target and the primary is down",
			in:  group("a", confirmed(down("a")), with(ro("c", "A:1-8,C:1-3"), func(v *SiteView) { v.Diverged = true })),
			ask: ask("c:3e11fa47"), reason: v1alpha1.ReasonRecloneNoDonor},
		{name: "no active site recorded", in: group("", primary, ro("b", "A:1-10")),
			ask: ask("b:confirm=orders"), reason: v1alpha1.ReasonRecloneNoDonor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := DecideReclone(tc.in, tc.ask)
			if v.Reason != tc.reason {
				t.Fatalf("reason = %q (%s), want %q", v.Reason, v.Message, tc.reason)
			}
			if !v.Accepted() && v.Message == "" {
				t.Fatal("a refusal says nothing")
			}
			if v.Accepted() && v.Donor != tc.wantDonor {
				t.Fatalf("donor = %+v, want %+v", v.Donor, tc.wantDonor)
			}
		})
	}
}

// FuzzDecideReclone: no annotation value panics or is accepted without
// naming a site of the group.
func FuzzDecideReclone(f *testing.F) {
	for _, s := range []string{"c:3e11fa47", "b:confirm=orders", "::::", "a:", "\xff:\xfe", "c:confirm=confirm="} {
		f.Add(s)
	}
	in := group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), ro("c", "A:1-10"))
	f.Fuzz(func(t *testing.T, value string) {
		v := DecideReclone(in, RecloneAsk{Group: "orders", Value: value, Divergent: map[string]string{"c": "0-3-5"}})
		if v.Accepted() && v.Request.Site != "b" && v.Request.Site != "c" {
			t.Fatalf("accepted %q for site %q", value, v.Request.Site)
		}
	})
}

// TestRecloneCaughtUp: a recloned site rejoins only once it is read-only,
// replicating, holds the primary's set and nothing of its own.
func TestRecloneCaughtUp(t *testing.T) {
	target := set("A:1-10")
	tests := []struct {
		name string
		site SiteView
		want bool
	}{
		{name: "caught up", site: ro("c", "A:1-12"), want: true},
		{name: "behind the target", site: ro("c", "A:1-9")},
		{name: "empty after the clone (no transaction replicated yet)", site: ro("c", "")},
		{name: "not replicating", site: with(ro("c", "A:1-10"), func(v *SiteView) { v.Replication.Running = false })},
		{name: "replication error", site: with(ro("c", "A:1-10"), func(v *SiteView) { v.Replication.Error = "1236" })},
		{name: "still holds errant transactions", site: ro("c", "A:1-10,C:1-3")},
		{name: "down", site: down("c")},
		{name: "stale", site: with(ro("c", "A:1-10"), func(v *SiteView) { v.Stale = true })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := group("a", wr("a", "A:1-12"), ro("b", "A:1-12"), tc.site)
			got, why := RecloneCaughtUp(in, "c", target)
			if got != tc.want || (!got && why == "") {
				t.Fatalf("caught up = %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

// TestRecoveryWaiting: diverged sites without a running reclone wait for a person.
func TestRecoveryWaiting(t *testing.T) {
	tests := []struct {
		name    string
		div     map[string]string
		running map[string]bool
		want    []string
	}{
		{name: "none diverged", div: map[string]string{}},
		{name: "one diverged", div: map[string]string{"c": "C:1"}, want: []string{"c"}},
		{name: "one diverged being recloned", div: map[string]string{"c": "C:1"}, running: map[string]bool{"c": true}},
		{name: "spec order", div: map[string]string{"c": "C:1", "b": "B:1"}, want: []string{"b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RecoveryWaiting([]string{"a", "b", "c"}, tc.div, tc.running)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRecloneMayWipe: a site's data is replaced only once another
// candidate replica holds what it holds or received, but its errant set.
func TestRecloneMayWipe(t *testing.T) {
	tests := []struct {
		name      string
		in        Input
		divergent string
		wait      bool
	}{
		{name: "another replica holds it all", in: group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), ro("c", "A:1-9"))},
		{name: "only the recloned site holds an acknowledged commit",
			in: group("a", wr("a", "A:1-10"), ro("b", "A:1-9"), ro("c", "A:1-10")), wait: true},
		{name: "received but not applied counts",
			in: group("a", wr("a", "A:1-10"), ro("b", "A:1-9"), with(ro("c", "A:1-9"), func(v *SiteView) {
				v.Replication.Retrieved = set("A:1-10")
			})), wait: true},
		{name: "its errant set is not waited for",
			in: group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), ro("c", "A:1-10,C:1-3")), divergent: "C:1-3"},
		{name: "a held replica is no copy",
			in: group("a", wr("a", "A:1-10"), with(ro("b", "A:1-10"), func(v *SiteView) { v.AdminFenced = true }),
				ro("d", "A:1-9"), ro("c", "A:1-10")), wait: true},
		{name: "a stale replica is no copy",
			in: group("a", wr("a", "A:1-10"), with(ro("b", "A:1-10"), func(v *SiteView) { v.Stale = true }),
				ro("d", "A:1-9"), ro("c", "A:1-10")), wait: true},
		{name: "a dr-only replica is no copy",
			in: group("a", wr("a", "A:1-10"), role(ro("b", "A:1-10"), v1alpha1.RoleDROnly),
				ro("d", "A:1-9"), ro("c", "A:1-10")), wait: true},
		{name: "two sites: the active site holds it all", in: group("a", wr("a", "A:1-10"), ro("c", "A:1-9"))},
		{name: "two sites: only the recloned site holds it, not the active site",
			in: group("a", wr("a", "A:1-10"), ro("c", "A:1-10,C:11-15")), wait: true},
		{name: "two sites: its errant set is not waited for",
			in: group("a", wr("a", "A:1-10"), ro("c", "A:1-10,C:1-3")), divergent: "C:1-3"},
		{name: "no other copy up: the active site holds it all",
			in: group("a", wr("a", "A:1-10"), down("b"), ro("c", "A:1-10"))},
		{name: "no other copy up: the active site lacks its tail",
			in:   group("a", wr("a", "A:1-10"), down("b"), with(down("c"), func(v *SiteView) { v.Executed = set("A:1-10,C:11-15") })),
			wait: true},
		{name: "no other copy and the active site not observed",
			in: group("a", with(wr("a", "A:1-10"), func(v *SiteView) { v.Stale = true }), down("b"), ro("c", "A:1-9")), wait: true},
		{name: "unobserved, nothing known: it may hold all the active site holds, which b lacks",
			in: group("a", wr("a", "A:1-10"), ro("b", "A:1-8"), down("c")), wait: true},
		{name: "unobserved, nothing known: b holds all the active site holds",
			in: group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), down("c"))},
		{name: "stale: judged on its last set and the active site's",
			in:   group("a", wr("a", "A:1-10"), ro("b", "A:1-9"), with(ro("c", "A:1-5"), func(v *SiteView) { v.Stale = true })),
			wait: true},
		{name: "unobserved, its last set holds more than the active site's",
			in:   group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), with(down("c"), func(v *SiteView) { v.Executed = set("A:1-11") })),
			wait: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := RecloneMayWipe(tc.in, "c", set(tc.divergent))
			if (why != "") != tc.wait {
				t.Fatalf("RecloneMayWipe = %q, want wait %v", why, tc.wait)
			}
		})
	}
}

// TestRecloneHolds: a reclone holds its site from the moment its data may
// be partly replaced, but never the active site nor a failover's target.
func TestRecloneHolds(t *testing.T) {
	cloning := &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryCloning}
	failedCloning := &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryFailed, FailedPhase: v1alpha1.RecoveryCloning}
	base := func() Input { return group("a", wr("a", "A:1-10"), ro("b", "A:1-10"), ro("c", "A:1-10")) }
	cases := []struct {
		name    string
		in      func(in *Input)
		planned string
		r       *v1alpha1.SiteRecovery
		want    bool
	}{
		{name: "no reclone", r: nil, want: false},
		{name: "cloning", r: cloning, want: true},
		{name: "failed in cloning", r: failedCloning, want: true},
		{name: "rejoined", r: &v1alpha1.SiteRecovery{Phase: v1alpha1.RecoveryRejoined}, want: false},
		{name: "the active site is never held", in: func(in *Input) { in.ActiveSite = "c" }, r: failedCloning, want: false},
		{name: "an emergency failover's target is never held",
			in: func(in *Input) { in.InFlight = &Intent{From: "a", To: "c", Generation: 5} }, r: cloning, want: false},
		{name: "a planned failover's target is never held",
			in: func(in *Input) { in.PlannedInFlight = true }, planned: "c", r: failedCloning, want: false},
		{name: "a planned failover that ended holds again", planned: "c", r: failedCloning, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			if tc.in != nil {
				tc.in(&in)
			}
			if got := RecloneHolds(in, tc.planned, "c", tc.r); got != tc.want {
				t.Fatalf("RecloneHolds = %v, want %v", got, tc.want)
			}
		})
	}
}
