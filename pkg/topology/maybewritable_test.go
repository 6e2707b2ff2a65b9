package topology

import (
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// maybe marks a site as possibly made writable by an operation whose
// outcome is unknown (a promotion that timed out).
func maybe(s SiteView) SiteView {
	return with(s, func(v *SiteView) { v.MaybeWritable = true })
}

// TestDecideMaybeWritable: a site whose promotion timed out may write even
// though its probes (taken before the promotion landed) show it read-only.
// No other site is made writable until it is fenced.
func TestDecideMaybeWritable(t *testing.T) {
	lostA := confirmed(down("a"))
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"retarget to a fresher site while the first target may write: blocked on it",
			inFlight(group("b", lostA, maybe(ro("b", "A:1-8")), ro("c", "A:1-10")), "a", "b"),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "c",
				unconfirmed: []string{"b"}, wanted: KindFailover}},
		{"after the retarget the first target is fenced before anything else",
			inFlight(group("c", lostA, maybe(ro("b", "A:1-8")), ro("c", "A:1-10")), "a", "c"),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonMaybeWritable, target: "c", fence: []string{"b"}}},
		{"a writable active site and a maybe-writable peer: fence the peer",
			group("c", lostA, maybe(ro("b", "A:1-8")), wr("c", "A:1-10")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonMaybeWritable, target: "c", fence: []string{"b"}}},
		{"an observed second writer keeps its own reason",
			group("c", lostA, maybe(ro("b", "A:1-8")), wr("c", "A:1-10"), wr("d", "A:1-10")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "c", fence: []string{"b", "d"}}},
		{"an unreachable maybe-writable site is not held read-only",
			inFlight(group("c", lostA, maybe(down("b")), ro("c", "A:1-10")), "a", "c"),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "c",
				unconfirmed: []string{"b"}, wanted: KindFailover}},
		{"an unreachable maybe-writable site confirmed since: promote",
			inFlight(group("c", lostA, confirmed(maybe(down("b"))), ro("c", "A:1-10")), "a", "c"),
			want{kind: KindFailover, reason: v1alpha1.ReasonFailoverRunning, target: "c"}},
		{"confirmation does not excuse a reachable maybe-writable site: it is fenced",
			inFlight(group("c", lostA, confirmed(maybe(ro("b", "A:1-8"))), ro("c", "A:1-10")), "a", "c"),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonMaybeWritable, target: "c", fence: []string{"b"}}},
		{"the promotion of the same target is retried",
			inFlight(group("b", lostA, maybe(ro("b", "A:1-10")), ro("c", "A:1-10")), "a", "b"),
			want{kind: KindFailover, reason: v1alpha1.ReasonFailoverRunning, target: "b"}},
		{"a re-assertion that timed out is retried",
			group("a", maybe(ro("a", "A:1-10")), ro("b", "A:1-10")),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
		{"re-asserting the active site waits for a maybe-writable peer",
			group("a", ro("a", "A:1-10"), maybe(down("b"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "a",
				unconfirmed: []string{"b"}, wanted: KindNoPrimary}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}
