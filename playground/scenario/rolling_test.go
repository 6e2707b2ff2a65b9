package scenario

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

func TestLongestGap(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ack := func(s float64) load.Attempt { return load.Attempt{OK: true, End: at(s)} }
	fail := func(s float64) load.Attempt { return load.Attempt{End: at(s)} }
	for _, c := range []struct {
		name   string
		as     []load.Attempt
		from   float64
		to     float64
		expect time.Duration
	}{
		{"the longest gap inside the span", []load.Attempt{ack(0), ack(1), ack(4), ack(4.5)}, 0.5, 5, 3 * time.Second},
		{"failures do not end a gap", []load.Attempt{ack(1), fail(2), fail(3), ack(5)}, 0, 6, 4 * time.Second},
		{"a gap across the start counts whole", []load.Attempt{ack(0), ack(3), ack(3.5)}, 2, 4, 3 * time.Second},
		{"a gap across the end counts whole", []load.Attempt{ack(1), ack(2), ack(6)}, 1, 3, 4 * time.Second},
		{"a gap wholly before the span does not count", []load.Attempt{ack(0), ack(5), ack(5.5), ack(6)}, 5.2, 7, 500 * time.Millisecond},
		{"unsorted attempts", []load.Attempt{ack(4), ack(0), ack(1)}, 0, 5, 3 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := longestGap(c.as, at(c.from), at(c.to)); got != c.expect {
				t.Errorf("longestGap = %s, want %s", got, c.expect)
			}
		})
	}
}

func TestDownSpansAndTwoDown(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	sample := func(s int, down ...string) siteSample {
		d := map[string]string{}
		for _, site := range down {
			d[site] = "no Ready Pod"
		}
		return siteSample{At: t0.Add(time.Duration(s) * time.Second), Down: d}
	}
	samples := []siteSample{sample(0), sample(1, "a"), sample(2, "a"), sample(3), sample(4, "b"), sample(5, "b", "c"), sample(6, "c")}
	spans := downSpans(samples)
	want := []struct {
		site     string
		from, to int
	}{{"a", 1, 3}, {"b", 4, 6}, {"c", 5, 6}}
	if len(spans) != len(want) {
		t.Fatalf("spans %+v, want %d", spans, len(want))
	}
	for i, w := range want {
		s := spans[i]
		if s.Site != w.site || !s.From.Equal(t0.Add(time.Duration(w.from)*time.Second)) ||
			!s.To.Equal(t0.Add(time.Duration(w.to)*time.Second)) {
			t.Errorf("span %d = %s %s..%s, want %s %d..%d", i, s.Site, s.From, s.To, w.site, w.from, w.to)
		}
	}
	two := twoDown(samples)
	if len(two) != 1 || !two[0].At.Equal(t0.Add(5*time.Second)) {
		t.Errorf("twoDown = %+v, want the sample at 5 s alone", two)
	}
}
