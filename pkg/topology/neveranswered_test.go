package topology

import (
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func never(s SiteView) SiteView { return with(s, func(v *SiteView) { v.NeverAnswered = true }) }

// TestDecideNeverAnswered: Decide honours SiteView.NeverAnswered. An active
// site that never answered is not failed over from, and the decision says
// why; a peer that never answered is not ready rather than down; a group
// none of whose sites ever answered is not a total loss.
func TestDecideNeverAnswered(t *testing.T) {
	cases := []struct {
		name  string
		in    Input
		want  want
		never bool // the message says the active site never answered
	}{
		{"active never answered: not ready, no failover", group("a", never(down("a")), ro("b", "A:1")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}, true},
		{"active answered once, now down: failover", group("a", down("a"), ro("b", "A:1")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "b",
				unconfirmed: []string{"a"}, wanted: KindFailover}, false},
		{"active not observed yet (unknown, answered before): not ready, ordinary wording",
			group("a", unk("a"), ro("b", "A:1")), want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}, false},
		{"active never answered and unknown: never-answered wording", group("a", never(unk("a")), ro("b", "A:1")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}, true},
		{"peer never answered: not ready, not peer down", group("a", wr("a", "A:1"), never(down("b"))),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}, false},
		{"no site ever answered: not total loss", group("a", never(down("a")), never(down("b"))),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}, true},
		{"a writable site is never held by the flag", group("a", never(wr("a", "A:1")), ro("b", "A:1")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := assertDecision(t, c.in, c.want)
			if got := strings.Contains(d.Message, "has not answered since the group was created"); got != c.never {
				t.Fatalf("message %q: says never answered = %v, want %v", d.Message, got, c.never)
			}
		})
	}
}

// TestJudgeShowsNeverAnswered: the Input every reader of a pass sees shows a
// never-answered unreachable site unknown, as Decide does.
func TestJudgeShowsNeverAnswered(t *testing.T) {
	in := group("a", never(down("a")), down("b"))
	j := Judge(in)
	if j.Sites[0].State != v1alpha1.StateUnknown || j.Sites[1].State != v1alpha1.StateUnreachable {
		t.Fatalf("judged states %s, %s; want unknown, unreachable", j.Sites[0].State, j.Sites[1].State)
	}
	if in.Sites[0].State != v1alpha1.StateUnreachable {
		t.Fatal("Judge changed its argument's sites")
	}
}
