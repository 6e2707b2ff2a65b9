package gtid_test

import (
	"math"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

type binCase struct {
	name, a, b, want string
}

func runBinary(t *testing.T, op func(a, b gtid.Set) gtid.Set, tests []binCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := gtid.MustParseSet(tt.a), gtid.MustParseSet(tt.b)
			aStr, bStr := a.String(), b.String()
			got := op(a, b)
			if want := gtid.MustParseSet(tt.want); !got.Equal(want) {
				t.Errorf("got %q, want %q", got, want)
			}
			if a.String() != aStr || b.String() != bStr {
				t.Errorf("operands modified: %q, %q", a, b)
			}
		})
	}
}

func TestUnion(t *testing.T) {
	runBinary(t, gtid.Set.Union, []binCase{
		{"empty both", "", "", ""},
		{"empty left", "", u1 + ":1-5", u1 + ":1-5"},
		{"empty right", u1 + ":1-5", "", u1 + ":1-5"},
		{"adjacent merge", u1 + ":1-5", u1 + ":6-9", u1 + ":1-9"},
		{"gap kept", u1 + ":1-5", u1 + ":7-9", u1 + ":1-5:7-9"},
		{"fills gap", u1 + ":1-5:7-9", u1 + ":6", u1 + ":1-9"},
		{"overlap", u1 + ":1-5", u1 + ":3-8", u1 + ":1-8"},
		{"different sources", u1 + ":1", u2 + ":1", u1 + ":1," + u2 + ":1"},
		{"tag is its own source", u1 + ":1-3", u1 + ":t:1-3", u1 + ":1-3:t:1-3"},
		{"mariadb", "0-1:1-50", "0-2:51-100,0-1:40-60", "0-1:1-60,0-2:51-100"},
		{"max seq", u1 + ":9223372036854775806", u1 + ":9223372036854775807", u1 + ":9223372036854775806-9223372036854775807"},
	})
}

func TestSubtract(t *testing.T) {
	runBinary(t, gtid.Set.Subtract, []binCase{
		{"empty minus any", "", u1 + ":1-5", ""},
		{"any minus empty", u1 + ":1-5", "", u1 + ":1-5"},
		{"self", u1 + ":1-5:7", u1 + ":1-5:7", ""},
		{"middle hole", u1 + ":1-10", u1 + ":4-6", u1 + ":1-3:7-10"},
		{"prefix", u1 + ":1-10", u1 + ":1-4", u1 + ":5-10"},
		{"suffix", u1 + ":1-10", u1 + ":8-20", u1 + ":1-7"},
		{"covers several", u1 + ":1-3:5-7:9-11", u1 + ":2-10", u1 + ":1:11"},
		{"several holes", u1 + ":1-20", u1 + ":2:4-5:19-30", u1 + ":1:3:6-18"},
		{"disjoint", u1 + ":1-5", u1 + ":6-9", u1 + ":1-5"},
		{"other source untouched", u1 + ":1-5," + u2 + ":1-5", u2 + ":1-9", u1 + ":1-5"},
		{"tag separate", u1 + ":1-5:t:1-5", u1 + ":t:1-5", u1 + ":1-5"},
		{"max seq", u1 + ":1-9223372036854775807", u1 + ":9223372036854775807", u1 + ":1-9223372036854775806"},
	})
}

func TestErrant(t *testing.T) {
	runBinary(t, gtid.Errant, []binCase{
		{"caught up", u1 + ":1-100", u1 + ":1-100", ""},
		{"lagging replica", u1 + ":1-90", u1 + ":1-100", ""},
		{"local write", u1 + ":1-100," + u2 + ":1-2", u1 + ":1-100", u2 + ":1-2"},
		{"unreplicated tail of old primary", u1 + ":1-105", u1 + ":1-100," + u2 + ":1-7", u1 + ":101-105"},
		{"tagged errant", u1 + ":1-10:ops:1", u1 + ":1-10", u1 + ":ops:1"},
	})
}

func TestContainsEqualCompare(t *testing.T) {
	tests := []struct {
		name, a, b string
		rel        gtid.Relation
	}{
		{"both empty", "", "", gtid.Equal},
		{"empty vs some", "", u1 + ":1", gtid.Subset},
		{"some vs empty", u1 + ":1", "", gtid.Superset},
		{"same", u1 + ":1-5:7", u1 + ":7:1-5", gtid.Equal},
		{"longer", u1 + ":1-10", u1 + ":1-5", gtid.Superset},
		{"shorter", u1 + ":1-5", u1 + ":1-10", gtid.Subset},
		{"hole in a", u1 + ":1-4:6-10", u1 + ":1-10", gtid.Subset},
		{"b spans a gap", u1 + ":1-4:6-10", u1 + ":3-7", gtid.Divergent},
		{"b beyond end", u1 + ":1-10", u1 + ":5-11", gtid.Divergent},
		{"extra source", u1 + ":1-10," + u2 + ":1", u1 + ":1-10", gtid.Superset},
		{"each has own", u1 + ":1-10," + u2 + ":1", u1 + ":1-10,0-1:1", gtid.Divergent},
		{"tag vs untagged", u1 + ":1", u1 + ":t:1", gtid.Divergent},
		{"mariadb", "0-1:1-50,0-2:51-100", "0-1:1-50,0-2:51-90", gtid.Superset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := gtid.MustParseSet(tt.a), gtid.MustParseSet(tt.b)
			if got := gtid.Compare(a, b); got != tt.rel {
				t.Errorf("Compare = %v, want %v", got, tt.rel)
			}
			wantAB := tt.rel == gtid.Equal || tt.rel == gtid.Superset
			wantBA := tt.rel == gtid.Equal || tt.rel == gtid.Subset
			if a.Contains(b) != wantAB || b.Contains(a) != wantBA {
				t.Errorf("Contains: a⊇b=%v b⊇a=%v for %v", a.Contains(b), b.Contains(a), tt.rel)
			}
			if a.Equal(b) != (tt.rel == gtid.Equal) || b.Equal(a) != (tt.rel == gtid.Equal) {
				t.Errorf("Equal disagrees with %v", tt.rel)
			}
		})
	}
}

func TestRelationString(t *testing.T) {
	for r, want := range map[gtid.Relation]string{
		gtid.Equal: "Equal", gtid.Superset: "Superset", gtid.Subset: "Subset",
		gtid.Divergent: "Divergent", gtid.Relation(42): "Relation(?)",
	} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}

func TestZeroSet(t *testing.T) {
	var z gtid.Set
	if !z.IsEmpty() || z.Count() != 0 || z.String() != "" || !z.Equal(gtid.MustParseSet("")) {
		t.Errorf("zero Set is not the empty set: %q", z)
	}
	s := gtid.MustParseSet(u1 + ":1")
	if !s.Union(z).Equal(s) || !s.Subtract(z).Equal(s) || !s.Contains(z) || z.Contains(s) {
		t.Error("zero Set does not behave as empty in operations")
	}
}

func TestCountSaturates(t *testing.T) {
	s := gtid.MustParseSet(u1 + ":1-9223372036854775807," + u2 + ":1-9223372036854775807,0-1:1-9223372036854775807")
	if got := s.Count(); got != math.MaxUint64 {
		t.Errorf("Count() = %d, want saturation at MaxUint64", got)
	}
}
