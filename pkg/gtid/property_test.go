package gtid_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// model is the naive reference: canonical source id -> set of seqs.
type model map[string]map[uint64]bool

var propSources = []string{u1, u1 + ":t", u1 + ":alpha", u2, "0-1", "0-2", "10-1"}

// randomSet returns GTID text in a random but valid spelling, and its model.
// Seqs lie in base+1 .. base+45 (capped at MaxSeq) so that intervals collide often.
func randomSet(r *rand.Rand, base uint64) (string, model) {
	m := model{}
	var entries []string
	for range r.IntN(5) {
		src := propSources[r.IntN(len(propSources))]
		head := src
		if r.IntN(3) == 0 {
			head = strings.ToUpper(head)
		}
		parts := []string{head}
		for range 1 + r.IntN(3) {
			lo := base + 1 + uint64(r.IntN(40))
			hi := min(lo+uint64(r.IntN(6)), gtid.MaxSeq)
			if m[src] == nil {
				m[src] = map[uint64]bool{}
			}
			for n := lo; n <= hi; n++ {
				m[src][n] = true
			}
			if lo == hi && r.IntN(2) == 0 {
				parts = append(parts, fmt.Sprint(lo))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", lo, hi))
			}
		}
		entries = append(entries, strings.Join(parts, ":"))
	}
	sep := []string{",", ",\n", " , "}[r.IntN(3)]
	return strings.Join(entries, sep), m
}

// toModel converts a Set to the model, checking the interval invariants.
func toModel(t *testing.T, s gtid.Set) model {
	t.Helper()
	m := model{}
	for _, src := range s.Sources() {
		ivs := s.Intervals(src)
		if len(ivs) == 0 {
			t.Fatalf("%q: source %s has no intervals", s, src)
		}
		m[src] = map[uint64]bool{}
		for i, iv := range ivs {
			if iv.Start == 0 || iv.End < iv.Start || i > 0 && iv.Start <= ivs[i-1].End+1 {
				t.Fatalf("%q: intervals of %s not normalized: %v", s, src, ivs)
			}
			for n := iv.Start; n <= iv.End; n++ {
				m[src][n] = true
			}
		}
	}
	return m
}

func (m model) union(o model) model {
	out := model{}
	for _, x := range []model{m, o} {
		for src, seqs := range x {
			for n := range seqs {
				if out[src] == nil {
					out[src] = map[uint64]bool{}
				}
				out[src][n] = true
			}
		}
	}
	return out
}

func (m model) subtract(o model) model {
	out := model{}
	for src, seqs := range m {
		for n := range seqs {
			if !o[src][n] {
				if out[src] == nil {
					out[src] = map[uint64]bool{}
				}
				out[src][n] = true
			}
		}
	}
	return out
}

func (m model) contains(o model) bool { return len(o.subtract(m)) == 0 }

func (m model) equal(o model) bool { return m.contains(o) && o.contains(m) }

func (m model) count() uint64 {
	var n uint64
	for _, seqs := range m {
		n += uint64(len(seqs))
	}
	return n
}

func TestPropertySetAlgebra(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		base := uint64(0)
		if i%10 == 9 {
			base = gtid.MaxSeq - 40 // exercise the top of the range
		}
		at, am := randomSet(r, base)
		bt, bm := randomSet(r, base)
		a, b := gtid.MustParseSet(at), gtid.MustParseSet(bt)
		ctx := fmt.Sprintf("a=%q b=%q", at, bt)
		checkModel(t, ctx+" a", a, am)
		checkModel(t, ctx+" union", a.Union(b), am.union(bm))
		checkModel(t, ctx+" a-b", a.Subtract(b), am.subtract(bm))
		checkModel(t, ctx+" errant", gtid.Errant(b, a), bm.subtract(am))
		if got, want := a.Contains(b), am.contains(bm); got != want {
			t.Fatalf("%s: Contains = %v, want %v", ctx, got, want)
		}
		if got, want := a.Equal(b), am.equal(bm); got != want {
			t.Fatalf("%s: Equal = %v, want %v", ctx, got, want)
		}
		if (a.String() == b.String()) != am.equal(bm) {
			t.Fatalf("%s: String not canonical: %q vs %q", ctx, a, b)
		}
		if got, want := gtid.Compare(a, b), modelRelation(am, bm); got != want {
			t.Fatalf("%s: Compare = %v, want %v", ctx, got, want)
		}
	}
}

func checkModel(t *testing.T, ctx string, s gtid.Set, want model) {
	t.Helper()
	if got := toModel(t, s); !got.equal(want) {
		t.Fatalf("%s: got %q", ctx, s)
	}
	if s.Count() != want.count() || s.IsEmpty() != (want.count() == 0) {
		t.Fatalf("%s: Count = %d, want %d", ctx, s.Count(), want.count())
	}
	again, err := gtid.ParseSet(s.String())
	if err != nil || !again.Equal(s) || again.String() != s.String() {
		t.Fatalf("%s: %q does not round-trip: %v", ctx, s, err)
	}
}

func modelRelation(a, b model) gtid.Relation {
	ab, ba := a.contains(b), b.contains(a)
	switch {
	case ab && ba:
		return gtid.Equal
	case ab:
		return gtid.Superset
	case ba:
		return gtid.Subset
	}
	return gtid.Divergent
}
