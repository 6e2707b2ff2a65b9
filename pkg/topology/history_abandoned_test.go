package topology

import (
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The emergency failover iad -> pdx promoted pdx, but the answer was lost:
// pdx is maybe-writable. It wrote B:1-2, which fra replicated, then became
// unreachable, and the failover was retargeted to fra. pdx's writes may be
// fra's history: until the failover completes, neither is judged diverged
// for them; once fra is promoted, its set judges pdx. Found by the
// simulation with the real operator (seeds 11935 and 11990,
// truthful-divergence: fra and pdx were marked divergent for good and the
// group was left without a candidate).
func TestRetargetAbandonsMaybeWritableTarget(t *testing.T) {
	maybe := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.MaybeWritable = true }) }
	inFlight := func(step v1alpha1.FailoverStep, promoted string, abandoned []string, sites ...SiteView) Input {
		in := promotedAt(afterFailover(group("fra", sites...), "x", "iad", time.Hour), promoted)
		in.InFlight = &Intent{From: "iad", To: "fra", Generation: in.Generation, Step: step, Abandoned: abandoned}
		return in
	}
	retargeted := func(abandoned []string, sites ...SiteView) Input {
		return inFlight(v1alpha1.StepFencing, "A:1-50", abandoned, sites...)
	}
	iad := sid(confirmed(down("iad")), uuidA)
	pdxDown := sid(maybe(down("pdx")), uuidB)
	cases := []struct {
		name     string
		in       Input
		diverged []string
	}{
		{"no abandoned target recorded: fra judged on pdx's writes (the bug)",
			retargeted(nil, iad, pdxDown, sid(ro("fra", "A:1-50,B:1-2"), uuidC)),
			[]string{"fra"}},
		{"pdx abandoned: fra holds the history",
			retargeted([]string{"pdx"}, iad, pdxDown, sid(ro("fra", "A:1-50,B:1-2"), uuidC)),
			nil},
		{"pdx abandoned and fenced since, its mark cleared: still the history until fra is promoted",
			retargeted([]string{"pdx"}, iad, sid(ro("pdx", "A:1-50,B:1-2"), uuidB),
				sid(ro("fra", "A:1-50,B:1-2"), uuidC)),
			nil},
		{"promoting fra, its answer lost: pdx's writes still the history",
			inFlight(v1alpha1.StepPromoting, "A:1-50", []string{"pdx"}, iad, sid(ro("pdx", "A:1-50,B:1-3"), uuidB),
				sid(maybe(ro("fra", "A:1-50,B:1-2")), uuidC)),
			nil},
		{"fra promoted (routing): its promotion set judges pdx's tail fra never received",
			inFlight(v1alpha1.StepRouting, "A:1-50,B:1-2", []string{"pdx"}, iad, sid(ro("pdx", "A:1-50,B:1-3"), uuidB),
				sid(wr("fra", "A:1-50,B:1-2,C:1"), uuidC)),
			[]string{"pdx"}},
		{"fra promoted (repointing): pdx holding only what fra holds is not diverged",
			inFlight(v1alpha1.StepRepointing, "A:1-50,B:1-2", []string{"pdx"}, iad, sid(ro("pdx", "A:1-50,B:1-2"), uuidB),
				sid(wr("fra", "A:1-50,B:1-2,C:1"), uuidC)),
			nil},
		{"an errant write of another server is still errant",
			retargeted([]string{"pdx"}, iad, pdxDown,
				sid(ro("fra", "A:1-50,B:1-2,dddddddd-0000-0000-0000-000000000004:1"), uuidC)),
			[]string{"fra"}},
		{"a site never abandoned is judged on its own writes",
			retargeted([]string{"pdx"}, iad, pdxDown, sid(ro("fra", "A:1-50"), uuidC),
				sid(ro("syd", "A:1-50,dddddddd-0000-0000-0000-000000000004:1"), "dddddddd-0000-0000-0000-000000000004")),
			[]string{"syd"}},
		{"the target's own errant write is not hidden by abandoning another site",
			retargeted([]string{"pdx"}, iad, pdxDown, sid(ro("fra", "A:1-50,C:1"), uuidC)),
			[]string{"fra"}},
		{"an abandoned site no longer in spec is skipped",
			retargeted([]string{"gone"}, iad, pdxDown, sid(ro("fra", "A:1-50"), uuidC)),
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range Judge(tc.in).Sites {
				if s.Diverged {
					got = append(got, s.Name)
				}
			}
			if !slices.Equal(got, tc.diverged) {
				t.Fatalf("diverged %v, want %v", got, tc.diverged)
			}
		})
	}
}

// TestRetargetedBackToAnAbandonedTarget: the failover moved from pdx
// (maybe-writable, it wrote B:1-2) to fra, pdx was fenced, and fra failed
// in turn: the failover moves back to pdx. pdx stays on the abandoned list,
// so its own writes are still the history's and it is no diverged site
// (before, it was dropped from the list, marked diverged for writes nobody
// discarded, and the failover would flap away from it again).
func TestRetargetedBackToAnAbandonedTarget(t *testing.T) {
	in := promotedAt(afterFailover(group("pdx", sid(confirmed(down("iad")), uuidA),
		sid(ro("pdx", "A:1-50,B:1-2"), uuidB), sid(confirmed(down("fra")), uuidC)), "x", "iad", time.Hour), "A:1-50")
	in.InFlight = &Intent{From: "iad", To: "fra", Generation: in.Generation, Step: v1alpha1.StepPromoting,
		Abandoned: []string{"pdx"}}
	// While fra was the target, pdx's writes were read and kept.
	d, err := Decide(in)
	if err != nil || !d.AbandonedWrote.Equal(set("B:1-2")) {
		t.Fatalf("pdx's writes known %v (%v), want B:1-2", d.AbandonedWrote, err)
	}
	in.InFlight.Abandoned = abandoned(in, "pdx")
	in.InFlight.To, in.InFlight.AbandonedWrote = "pdx", d.AbandonedWrote
	for _, s := range Judge(in).Sites {
		if s.Diverged {
			t.Fatalf("abandoned %v: %s marked diverged", in.InFlight.Abandoned, s.Name)
		}
	}
}

// TestAbandonedExemptsOnlyWhatItWrote: a listed abandoned target is exempt
// for the writes it is known to have made as a maybe-writable target, not
// for every transaction of its server. Before, a stale or edited status
// that listed the target itself hid its errant writes until its promotion
// adopted them.
func TestAbandonedExemptsOnlyWhatItWrote(t *testing.T) {
	const uuidD = "dddddddd-0000-0000-0000-000000000004"
	inFlight := func(to string, abandoned []string, wrote string, sites ...SiteView) Input {
		in := promotedAt(afterFailover(group(to, sites...), "x", "iad", time.Hour), "A:1-50")
		in.InFlight = &Intent{From: "iad", To: to, Generation: in.Generation, Step: v1alpha1.StepFencing,
			Abandoned: abandoned, AbandonedWrote: set(wrote)}
		return in
	}
	iad := sid(confirmed(down("iad")), uuidA)
	cases := []struct {
		name     string
		in       Input
		diverged []string
	}{
		{"a status listing the target itself hides none of its errant writes",
			inFlight("fra", []string{"fra"}, "", iad, sid(ro("pdx", "A:1-50"), uuidB), sid(ro("fra", "A:1-50,C:1"), uuidC)),
			[]string{"fra"}},
		{"a target moved back to is exempt for what it was read writing while abandoned",
			inFlight("pdx", []string{"pdx"}, "B:1-2", iad, sid(ro("pdx", "A:1-50,B:1-2"), uuidB), sid(ro("fra", "A:1-50"), uuidC)),
			nil},
		{"... and not for a write past it",
			inFlight("pdx", []string{"pdx"}, "B:1-2", iad, sid(ro("pdx", "A:1-50,B:1-3"), uuidB), sid(ro("fra", "A:1-50"), uuidC)),
			[]string{"pdx"}},
		{"a record naming a server not listed exempts nothing",
			inFlight("fra", []string{"pdx"}, "dddddddd-0000-0000-0000-000000000004:1", iad, sid(ro("pdx", "A:1-50"), uuidB),
				sid(ro("fra", "A:1-50"), uuidC), sid(ro("syd", "A:1-50,"+uuidD+":1"), uuidD)),
			[]string{"syd"}},
		{"the record keeps pdx's writes known after pdx is gone",
			inFlight("fra", []string{"pdx"}, "B:1-2", iad, sid(down("pdx"), uuidB), sid(ro("fra", "A:1-50,B:1-2"), uuidC)),
			nil},
		{"what a previous failover lost is never an abandoned target's write",
			func() Input {
				in := inFlight("fra", []string{"pdx"}, "", iad, sid(down("pdx"), uuidB), sid(ro("fra", "A:1-50,B:1-2"), uuidC))
				in.History[len(in.History)-1].Lost = set("B:1")
				return in
			}(),
			[]string{"fra"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range Judge(tc.in).Sites {
				if s.Diverged {
					got = append(got, s.Name)
				}
			}
			if !slices.Equal(got, tc.diverged) {
				t.Fatalf("diverged %v, want %v", got, tc.diverged)
			}
		})
	}
}

// TestRetargetAbandonedCompleted: once the failover to fra completes, fra's
// promotion set is the history: what pdx wrote that fra never received is
// discarded, and pdx is diverged for it.
func TestRetargetAbandonedCompleted(t *testing.T) {
	in := promotedAt(afterFailover(group("fra", sid(confirmed(down("iad")), uuidA), sid(ro("pdx", "A:1-50,B:1-3"), uuidB),
		sid(wr("fra", "A:1-50,B:1-2,C:1"), uuidC)), "iad", "fra", time.Minute), "A:1-50,B:1-2")
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errant) != 1 || d.Errant[0].Site != "pdx" || !d.Errant[0].GTIDs.Equal(set("B:3")) {
		t.Fatalf("errant %v, want pdx B:3", d.Errant)
	}
}

// TestAbandoned: what a retarget records as abandoned.
func TestAbandoned(t *testing.T) {
	maybe := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.MaybeWritable = true }) }
	cases := []struct {
		name    string
		old     SiteView
		earlier []string
		target  string
		want    []string
	}{
		{"a maybe-writable target is abandoned", maybe(down("pdx")), nil, "fra", []string{"pdx"}},
		{"a target never made writable is not", down("pdx"), nil, "fra", nil},
		{"earlier abandoned targets are kept", maybe(down("pdx")), []string{"syd"}, "fra", []string{"syd", "pdx"}},
		{"retargeted back to an abandoned one: it stays listed, it wrote", down("pdx"), []string{"fra"}, "fra", []string{"fra"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := group("pdx", ro("iad", ""), tc.old, ro("fra", ""), ro("syd", ""))
			in.InFlight = &Intent{From: "iad", To: "pdx", Step: v1alpha1.StepPromoting, Abandoned: tc.earlier}
			if got := abandoned(in, tc.target); !slices.Equal(got, tc.want) {
				t.Fatalf("abandoned %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAdminFencedMaybeWritableTargetIsAbandonedMarked: an administrator
// fences the in-flight failover's target pdx while its promotion's outcome
// is unknown (maybe-writable). The pass retargets with pdx still marked, so
// the new intent lists it abandoned; no admin fence by SQL (which clears
// the mark) runs before that: the admin fence of an active site waits for
// no failover in flight, and pdx is fenced as an extra writer only once
// the retarget made fra the active site.
func TestAdminFencedMaybeWritableTargetIsAbandonedMarked(t *testing.T) {
	pdx := sid(with(ro("pdx", "A:1-50,B:1"), func(v *SiteView) { v.MaybeWritable, v.AdminFenced = true, true }), uuidB)
	in := promotedAt(afterFailover(group("pdx", sid(confirmed(down("iad")), uuidA), pdx,
		sid(ro("fra", "A:1-50,B:1"), uuidC)), "x", "iad", time.Hour), "A:1-50")
	in.InFlight = &Intent{From: "iad", To: "pdx", Generation: in.Generation, Step: v1alpha1.StepPromoting}
	d, err := Decide(in)
	if err != nil || d.AdminFence || !d.Retarget || d.Target != "fra" || !slices.Equal(d.Abandon, []string{"pdx"}) {
		t.Fatalf("decision %+v (%v): want a retarget to fra abandoning pdx, no admin fence first", d, err)
	}
	in.ActiveSite, in.InFlight.To, in.InFlight.Abandoned = "fra", "fra", d.Abandon
	in.InFlight.Step = v1alpha1.StepIntent
	if d, _ = Decide(in); d.Kind != KindFenceExtraWriters || !slices.Equal(d.Fence, []string{"pdx"}) {
		t.Fatalf("after the retarget: %+v, want pdx fenced as an extra writer", d)
	}
}
