package topology

import (
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func inFlightAt(in Input, from, to string, step v1alpha1.FailoverStep) Input {
	in = inFlight(in, from, to)
	in.InFlight.Step = step
	return in
}

// TestDecideSequence pins the fields the emergency failover sequence reads:
// whether it starts, whether it moves the failover in flight to another
// target, and whether the target may be made writable now or once the one
// unconfirmed site is confirmed.
func TestDecideSequence(t *testing.T) {
	lostA := confirmed(down("a"))
	type seq struct {
		start, retarget, promote bool
		onceFenced               string
	}
	cases := []struct {
		name   string
		in     Input
		target string
		want   seq
	}{
		{"healthy: nothing starts", group("a", wr("a", "A:1"), ro("b", "A:1")), "", seq{}},
		{"primary lost and confirmed fenced: start, promote now", group("a", lostA, ro("b", "A:1")), "b",
			seq{start: true, promote: true}},
		{"old primary not confirmed: start, promote once it is fenced", group("a", down("a"), ro("b", "A:1")), "b",
			seq{start: true, onceFenced: "a"}},
		{"two sites unconfirmed: start, no single fence unblocks", group("a", down("a"), ro("b", "A:1"), down("c")), "b",
			seq{start: true}},
		{"another site unconfirmed: start, only its confirmation unblocks", group("a", lostA, ro("b", "A:1"), down("c")), "b",
			seq{start: true, onceFenced: "c"}},
		{"cooldown: nothing starts", afterFailover(group("a", lostA, ro("b", "A:1")), "b", "a", time.Minute), "",
			seq{}},
		{"no candidate: nothing starts", group("a", lostA, down("b")), "", seq{}},
		{"divergent candidates: nothing starts", group("a", lostA, ro("b", "A:1-10,B:1"), ro("c", "A:1-11")), "b",
			seq{}},
		{"planned guard: nothing starts", withPlanned(group("a", lostA, ro("b", "A:1"))), "", seq{}},
		{"re-assertion blocked on a peer: no failover starts", group("a", ro("a", "A:1"), down("b")), "a",
			seq{onceFenced: "b"}},
		{"re-assertion: no failover starts", group("a", ro("a", "A:1"), ro("b", "A:1")), "a", seq{}},
		{"in flight at Fencing, target eligible: go on, no retarget",
			inFlightAt(group("b", lostA, ro("b", "A:1")), "a", "b", v1alpha1.StepFencing), "b",
			seq{start: true, promote: true}},
		{"in flight at Fencing, target lost: retarget",
			inFlightAt(group("b", lostA, confirmed(down("b")), ro("c", "A:1")), "a", "b", v1alpha1.StepFencing), "c",
			seq{start: true, retarget: true, promote: true}},
		{"in flight at Intent, fresher site appeared: retarget",
			inFlightAt(group("b", lostA, ro("b", "A:1-8"), ro("c", "A:1-10")), "a", "b", v1alpha1.StepIntent), "c",
			seq{start: true, retarget: true, promote: true}},
		{"in flight at Promoting, target lost, new target blocked on its fence: retarget",
			inFlightAt(group("b", lostA, down("b"), ro("c", "A:1")), "a", "b", v1alpha1.StepPromoting), "c",
			seq{start: true, retarget: true, onceFenced: "b"}},
		{"in flight at Routing (target made writable): never retargeted",
			inFlightAt(group("b", lostA, confirmed(down("b")), ro("c", "A:1")), "a", "b", v1alpha1.StepRouting), "c",
			seq{start: true, promote: true}},
		{"in flight at Fencing, planned guard holds it: nothing starts",
			withPlanned(inFlightAt(group("b", lostA, confirmed(down("b")), ro("c", "A:1")), "a", "b", v1alpha1.StepFencing)), "",
			seq{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Decide(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got := seq{start: d.Start, retarget: d.Retarget, promote: d.Promote, onceFenced: d.PromoteOnceFenced}
			if got != c.want || d.Target != c.target {
				t.Fatalf("%s: target %q %+v, want target %q %+v", d, d.Target, got, c.target, c.want)
			}
		})
	}
}

// TestDecisionPromotes: the emergency sequence may make its target writable
// when the decision promotes exactly that target, or when the one site
// blocking it is the old primary and the sequence confirmed it this pass.
func TestDecisionPromotes(t *testing.T) {
	promote := Decision{Kind: KindFailover, Target: "b", Promote: true, Message: "go"}
	blocked := Decision{Kind: KindFailoverBlocked, Target: "b", PromoteOnceFenced: "a", Message: "a not confirmed"}
	cases := []struct {
		name      string
		d         Decision
		from, to  string
		confirmed bool
		ok        bool
		why       string // a part of the reason given when not ok
	}{
		{"promotes this target", promote, "a", "b", false, true, ""},
		{"another target", promote, "a", "c", true, false, "does not promote c"},
		{"blocked on the old primary, now confirmed", blocked, "a", "b", true, true, ""},
		{"blocked on the old primary, not confirmed", blocked, "a", "b", false, false, "a not confirmed"},
		{"blocked on another site than the old primary", blocked, "c", "b", true, false, "a not confirmed"},
		{"no old primary named", Decision{Kind: KindFailoverBlocked, Target: "b", Message: "x"}, "", "b", true, false, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, why := c.d.Promotes(c.from, c.to, c.confirmed)
			if ok != c.ok || (!ok && !strings.Contains(why, c.why)) || (ok && why != "") {
				t.Fatalf("Promotes(%s, %s, %v) = %v %q, want %v %q", c.from, c.to, c.confirmed, ok, why, c.ok, c.why)
			}
		})
	}
}
