package scenario

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

func TestInThawWindow(t *testing.T) {
	thaw := time.Date(2026, 11, 24, 3, 28, 4, 251e6, time.UTC)
	at := func(ms int) time.Time { return thaw.Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name string
		o    load.Overlap
		want bool
	}{
		{"thawed site's write inside the promoted site's span",
			load.Overlap{Site: "b", From: at(-2000), To: at(4000), Other: "a", At: load.Attempt{Start: at(4), End: at(10)}}, true},
		{"promoted site's write inside the thawed site's short span",
			load.Overlap{Site: "a", From: at(10), To: at(43), Other: "b", At: load.Attempt{Start: at(30), End: at(38)}}, true},
		{"thawed site's write past the allowance",
			load.Overlap{Site: "b", From: at(-2000), To: at(4000), Other: "a", At: load.Attempt{Start: at(600), End: at(610)}}, false},
		{"thawed site's span running past the allowance",
			load.Overlap{Site: "a", From: at(10), To: at(900), Other: "b", At: load.Attempt{Start: at(30), End: at(38)}}, false},
		{"thawed site's span starting before the thaw",
			load.Overlap{Site: "a", From: at(-5), To: at(40), Other: "b", At: load.Attempt{Start: at(-3), End: at(2)}}, false},
		{"a third site is never tolerated",
			load.Overlap{Site: "b", From: at(0), To: at(40), Other: "c", At: load.Attempt{Start: at(5), End: at(10)}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := inThawWindow(c.o, "a", thaw); got != c.want {
				t.Fatalf("inThawWindow = %v, want %v", got, c.want)
			}
		})
	}
}
