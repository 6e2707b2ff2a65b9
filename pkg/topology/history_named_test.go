package topology

import (
	"slices"
	"testing"
	"time"
)

// TestNamedActiveBase: the last failover's target a (Promoted A:1-10) lost
// the active role to b through a planned failover that failed after its
// fence (no record names b); b was re-asserted and wrote B:1-5, which
// every site replicated. A second planned failover b -> c fenced b at
// A:1-10,B:1-5 and named c active; c is not writable yet. b's writes are
// the history: judged against the base NamedActiveBase records, nobody
// holds anything outside it. Found by the simulation with the real
// operator (seeds 7840, 61903 and ten more, truthful-divergence: every
// holder of b's writes was marked divergent for good).
func TestNamedActiveBase(t *testing.T) {
	named := func(promoted string, sites ...SiteView) Input {
		in := afterFailover(group("c", sites...), "x", "a", time.Hour)
		in.PlannedInFlight = true
		return promotedAt(in, promoted)
	}
	fenced := "A:1-10,B:1-5"
	base := NamedActiveBase(set("A:1-10"), set(fenced)).String()
	cases := []struct {
		name   string
		in     Input
		errant []string
	}{
		{"the recorded promotion alone: b's writes judged errant (the bug)",
			named("A:1-10", sid(ro("a", fenced), uuidA), sid(ro("b", fenced), uuidB), sid(ro("c", fenced), uuidC)),
			[]string{"a", "b", "c"}},
		{"the fenced set in the base: nobody diverged",
			named(base, sid(ro("a", fenced), uuidA), sid(ro("b", fenced), uuidB), sid(ro("c", fenced), uuidC)),
			nil},
		{"a replica that holds part of b's writes: not diverged",
			named(base, sid(ro("a", "A:1-10,B:1-3"), uuidA), sid(ro("b", fenced), uuidB), sid(ro("c", fenced), uuidC)),
			nil},
		{"an errant write of a replica is still errant",
			named(base, sid(ro("a", fenced+",dddddddd-0000-0000-0000-000000000004:1"), uuidA), sid(ro("b", fenced), uuidB), sid(ro("c", fenced), uuidC)),
			[]string{"a"}},
		{"the source's writes past its fenced set are outside the history",
			named(base, sid(ro("a", fenced), uuidA), sid(ro("b", "A:1-10,B:1-6"), uuidB), sid(ro("c", fenced), uuidC)),
			[]string{"b"}},
		{"the target's own writes once writable are the history",
			named(base, sid(ro("a", "A:1-10,B:1-5,C:1-2"), uuidA), sid(ro("b", fenced), uuidB), sid(wr("c", "A:1-10,B:1-5,C:1-2"), uuidC)),
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			judged := Judge(tc.in)
			var got []string
			for _, s := range judged.Sites {
				if s.Diverged {
					got = append(got, s.Name)
				}
			}
			if !slices.Equal(got, tc.errant) {
				t.Fatalf("diverged %v, want %v", got, tc.errant)
			}
		})
	}
}

// TestNamedActiveBaseUnion: the base keeps everything the recorded
// promotion held, and adds the fenced set.
func TestNamedActiveBaseUnion(t *testing.T) {
	cases := []struct{ name, promoted, fenced, want string }{
		{"fenced set a superset", "A:1-10", "A:1-10,B:1-5", "A:1-10,B:1-5"},
		{"nothing recorded yet", "", "A:1-4", "A:1-4"},
		{"fenced set lacks part of the promotion", "A:1-10,C:1", "A:1-10,B:1-5", "A:1-10,B:1-5,C:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NamedActiveBase(set(tc.promoted), set(tc.fenced)); !got.Equal(set(tc.want)) {
				t.Fatalf("base %s, want %s", got, set(tc.want))
			}
		})
	}
}
