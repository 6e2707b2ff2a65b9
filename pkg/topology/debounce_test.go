package topology

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

var t0 = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

// probes spells a probe sequence: w writable, r read-only, x failed.
func probes(t *testing.T, s string) []Probe {
	t.Helper()
	out := make([]Probe, 0, len(s))
	for _, c := range s {
		switch c {
		case 'w':
			out = append(out, ProbeWritable)
		case 'r':
			out = append(out, ProbeReadOnly)
		case 'x':
			out = append(out, ProbeFailed)
		default:
			t.Fatalf("bad probe letter %q", c)
		}
	}
	return out
}

// stateLetters spells states: W writable, R read-only, U unreachable, ? unknown.
func stateLetter(s v1alpha1.SiteState) string {
	switch s {
	case v1alpha1.StateWritable:
		return "W"
	case v1alpha1.StateReadOnly:
		return "R"
	case v1alpha1.StateUnreachable:
		return "U"
	}
	return "?"
}

func TestDebouncer(t *testing.T) {
	cases := []struct {
		name       string
		fail, rec  int
		probes     string
		wantStates string // state after each probe
	}{
		{"starts unknown and a first success shows the state", 3, 2, "w", "W"},
		{"first read-only success shows read-only", 3, 2, "r", "R"},
		{"unknown goes unreachable after failureThreshold failures", 3, 2, "xxx", "??U"},
		{"failures below the threshold keep the last state", 3, 2, "wxx", "WWW"},
		{"third consecutive failure declares unreachable", 3, 2, "wxxx", "WWWU"},
		{"a success in between resets the failure count", 3, 2, "wxxwxx", "WWWWWW"},
		{"read-only to writable is immediate", 3, 2, "rw", "RW"},
		{"writable to read-only (a fence) is immediate", 3, 2, "wr", "WR"},
		{"unreachable needs recoveryThreshold successes to come back", 3, 2, "wxxxw", "WWWUU"},
		{"second success in a row brings it back", 3, 2, "wxxxww", "WWWUUW"},
		{"comes back in the state the last probe shows", 3, 2, "wxxxwr", "WWWUUR"},
		{"a failure during recovery restarts the count", 3, 2, "wxxxwxww", "WWWUUUUW"},
		{"thresholds of one react to every probe", 1, 1, "wxwxr", "WUWUR"},
		{"recovery threshold of three", 2, 3, "rxxrrrr", "RRUUURR"},
		{"further failures while unreachable change nothing", 2, 2, "rxxxxx", "RRUUUU"},
		{"unknown with interleaved successes never goes unreachable", 2, 2, "xrxr", "?RRR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := NewDebouncer(c.fail, c.rec)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for i, p := range probes(t, c.probes) {
				s, _, err := d.Observe(t0.Add(time.Duration(i)*time.Second), p)
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString(stateLetter(s))
			}
			if got.String() != c.wantStates {
				t.Errorf("probes %s: states %s, want %s", c.probes, got.String(), c.wantStates)
			}
		})
	}
}

func TestDebouncerTimes(t *testing.T) {
	d, err := NewDebouncer(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	mustObserve := func(i int, p Probe) bool {
		_, changed, err := d.Observe(at(i), p)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	if !mustObserve(0, ProbeWritable) || !d.Since().Equal(at(0)) {
		t.Fatalf("first success: changed must be true and Since %v", d.Since())
	}
	if mustObserve(1, ProbeWritable) {
		t.Fatal("same state again must not report a change")
	}
	if _, failing := d.FailingSince(); failing {
		t.Fatal("not failing after a success")
	}
	mustObserve(2, ProbeFailed)
	if from, failing := d.FailingSince(); !failing || !from.Equal(at(2)) {
		t.Fatalf("FailingSince = %v %v, want %v true", from, failing, at(2))
	}
	if !mustObserve(3, ProbeFailed) || d.State() != v1alpha1.StateUnreachable || !d.Since().Equal(at(3)) {
		t.Fatalf("second failure: state %s since %v", d.State(), d.Since())
	}
	if !d.LastSuccess().Equal(at(1)) {
		t.Fatalf("LastSuccess = %v, want %v", d.LastSuccess(), at(1))
	}
}

func TestDebouncerErrors(t *testing.T) {
	cases := []struct {
		name      string
		fail, rec int
	}{
		{"zero failure threshold", 0, 1},
		{"negative recovery threshold", 1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewDebouncer(c.fail, c.rec); !errors.Is(err, ErrThreshold) {
				t.Fatalf("err = %v, want ErrThreshold", err)
			}
		})
	}
	t.Run("unknown probe value", func(t *testing.T) {
		d, _ := NewDebouncer(1, 1)
		if _, _, err := d.Observe(t0, Probe(0)); !errors.Is(err, ErrProbe) {
			t.Fatalf("err = %v, want ErrProbe", err)
		}
	})
}

// A writable answer is acted on at once: the debouncer keeps a recovering
// site unreachable for recoveryThreshold answers, but a site seen writable
// in this pass may write now, so it must count as a writer, never as an
// unreachable site whose fence the lease deadline confirmed (review of
// issue 13: the operator promoted past a site it saw writing). Then the
// never-answered rule (ShownState): only an unreachable site that never
// answered is shown otherwise, as unknown.
func TestShownSiteState(t *testing.T) {
	cases := []struct {
		name      string
		debounced v1alpha1.SiteState
		fresh     Probe
		never     bool // SiteView.NeverAnswered
		want      v1alpha1.SiteState
	}{
		{"recovering site seen writable", v1alpha1.StateUnreachable, ProbeWritable, false, v1alpha1.StateWritable},
		{"unknown site seen writable", v1alpha1.StateUnknown, ProbeWritable, false, v1alpha1.StateWritable},
		{"read-only site seen writable", v1alpha1.StateReadOnly, ProbeWritable, false, v1alpha1.StateWritable},
		{"recovering site seen read-only stays unreachable", v1alpha1.StateUnreachable, ProbeReadOnly, false, v1alpha1.StateUnreachable},
		{"writable site that failed once stays writable", v1alpha1.StateWritable, ProbeFailed, false, v1alpha1.StateWritable},
		{"no probe this pass", v1alpha1.StateUnreachable, 0, false, v1alpha1.StateUnreachable},
		{"never answered, unreachable: unknown", v1alpha1.StateUnreachable, ProbeFailed, true, v1alpha1.StateUnknown},
		{"answered once, unreachable: unreachable", v1alpha1.StateUnreachable, ProbeFailed, false, v1alpha1.StateUnreachable},
		{"never answered, unknown: unknown", v1alpha1.StateUnknown, 0, true, v1alpha1.StateUnknown},
		{"never answered, seen writable now: writable", v1alpha1.StateUnreachable, ProbeWritable, true, v1alpha1.StateWritable},
		{"read-only", v1alpha1.StateReadOnly, ProbeReadOnly, false, v1alpha1.StateReadOnly},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ShownState(WithFreshProbe(c.debounced, c.fresh), c.never); got != c.want {
				t.Fatalf("ShownState(WithFreshProbe(%s, %v), %v) = %s, want %s", c.debounced, c.fresh, c.never, got, c.want)
			}
		})
	}
}
