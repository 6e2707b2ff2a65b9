package scenario

import "testing"

func TestMedianMax(t *testing.T) {
	for _, c := range []struct {
		in       []float64
		med, max float64
	}{
		{[]float64{3}, 3, 3},
		{[]float64{5, 1, 3}, 3, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 4},
	} {
		if med, mx := medianMax(c.in); med != c.med || mx != c.max {
			t.Errorf("medianMax(%v) = %v, %v; want %v, %v", c.in, med, mx, c.med, c.max)
		}
	}
}

func TestRegistryOrderAndLookup(t *testing.T) {
	all := All()
	if len(all) != 26 {
		t.Fatalf("%d scenarios registered, want 26", len(all))
	}
	for i, s := range all {
		if s.Number != i+1 {
			t.Errorf("scenario %d is number %d (%s)", i+1, s.Number, s.Name)
		}
		if got, ok := Lookup(s.Name); !ok || got.Number != s.Number {
			t.Errorf("Lookup(%q) = %v, %v", s.Name, got.Number, ok)
		}
	}
	if s, ok := Lookup("5"); !ok || s.Name != "isolated-primary" {
		t.Errorf("Lookup(5) = %s, %v", s.Name, ok)
	}
}

// A count is printed once, as the total over the runs; a duration as its
// median and maximum.
func TestBenchCountLines(t *testing.T) {
	if units["isolated-lost-acked-async"] != countUnit || units["isolated-lost-acked-required"] != countUnit {
		t.Fatalf("the lost-acked figures are not counts: %v", units)
	}
	if got := sum([]float64{0, 3, 2}); got != 5 {
		t.Errorf("sum = %v, want 5", got)
	}
	r := Result{Figures: map[string]float64{"fence-s": 4.5, "lost-acked": 7}}
	figs := figures(r, map[string]string{"fence-s": "isolated-fence", "lost-acked": "isolated-lost-acked-async"})
	if figs["isolated-fence"] != 4.5 || figs["isolated-lost-acked-async"] != 7 {
		t.Errorf("figures = %v", figs)
	}
	if figures(Result{Figures: map[string]float64{"fence-s": 1}}, map[string]string{"lost-acked": "x"}) != nil {
		t.Error("a missing figure measured something")
	}
}
