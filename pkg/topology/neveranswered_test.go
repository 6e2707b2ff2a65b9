package topology

import (
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func never(s SiteView) SiteView { return with(s, func(v *SiteView) { v.NeverAnswered = true }) }

// TestShownState is the mapping itself: only an unreachable site that never
// answered is shown otherwise, as unknown.
func TestShownState(t *testing.T) {
	for _, c := range []struct {
		name  string
		state v1alpha1.SiteState
		never bool
		want  v1alpha1.SiteState
	}{
		{"never answered, unreachable: unknown", v1alpha1.StateUnreachable, true, v1alpha1.StateUnknown},
		{"answered once, unreachable: unreachable", v1alpha1.StateUnreachable, false, v1alpha1.StateUnreachable},
		{"never answered, unknown: unknown", v1alpha1.StateUnknown, true, v1alpha1.StateUnknown},
		{"writable", v1alpha1.StateWritable, false, v1alpha1.StateWritable},
		{"read-only", v1alpha1.StateReadOnly, false, v1alpha1.StateReadOnly},
	} {
		if got := ShownState(c.state, c.never); got != c.want {
			t.Errorf("%s: ShownState(%s, %v) = %s, want %s", c.name, c.state, c.never, got, c.want)
		}
	}
}

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
