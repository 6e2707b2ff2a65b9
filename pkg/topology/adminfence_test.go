package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func adminFenced(s SiteView) SiteView { return with(s, func(v *SiteView) { v.AdminFenced = true }) }

// TestDecideAdminFence: Decide honours SiteView.AdminFenced. A writable
// active site an administrator fenced is fenced (AdminFence) and nothing is
// promoted; a read-only one stays frozen; a fenced replica is never the
// candidate; a failover or planned failover holding the topology, or a lost
// authority, leaves the writable active site to those rules.
func TestDecideAdminFence(t *testing.T) {
	inFlight := func(in Input) Input { in.InFlight = &Intent{From: "b", To: "a", Generation: 3}; return in }
	cases := []struct {
		name  string
		in    Input
		want  want
		fence bool // Decision.AdminFence
	}{
		{"writable active fenced: fence it, promote nobody", group("a", adminFenced(wr("a", "A:1")), ro("b", "A:1")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", fence: []string{"a"},
				wanted: KindNoPrimary}, true},
		{"writable active fenced, peer down: still fenced first", group("a", adminFenced(wr("a", "A:1")), down("b")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", fence: []string{"a"},
				wanted: KindNoPrimary}, true},
		{"read-only active fenced: frozen, not re-asserted", group("a", adminFenced(ro("a", "A:1")), ro("b", "A:1")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", wanted: KindNoPrimary}, false},
		{"fenced replica while healthy: nothing to do", group("a", wr("a", "A:1"), adminFenced(ro("b", "A:1"))),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}, false},
		{"fenced replica is never the candidate", group("a", confirmed(down("a")), adminFenced(ro("b", "A:1")), ro("c", "A:1")),
			want{kind: KindFailover, reason: v1alpha1.ReasonPrimaryUnreachable, target: "c"}, false},
		{"only replica fenced: no candidate", group("a", confirmed(down("a")), adminFenced(ro("b", "A:1"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}, false},
		{"planned failover holds the topology: left alone", withPlanned(group("a", adminFenced(wr("a", "A:1")), ro("b", "A:1"))),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}, false},
		{"failover in flight holds the topology: left alone", inFlight(group("a", adminFenced(wr("a", "A:1")), ro("b", "A:1"))),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}, false},
		{"no active site recorded: left to the authority's adoption", group("", adminFenced(wr("a", "A:1")), ro("b", "A:1")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}, false},
		{"fenced active site writable besides another writer: extra writers first",
			group("a", adminFenced(wr("a", "A:1")), wr("b", "A:1")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: []string{"b"}}, false},
		{"cooldown does not hold the fence", afterFailover(group("a", adminFenced(wr("a", "A:1")), ro("b", "A:1")), "b", "a", time.Second),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", fence: []string{"a"},
				wanted: KindNoPrimary}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := assertDecision(t, c.in, c.want)
			if d.AdminFence != c.fence {
				t.Fatalf("%s: AdminFence = %v, want %v", d, d.AdminFence, c.fence)
			}
			if d.AdminFence && d.Active != "a" {
				t.Fatalf("%s: Active = %q, want a", d, d.Active)
			}
		})
	}
}
