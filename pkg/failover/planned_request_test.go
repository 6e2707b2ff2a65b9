package failover

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParsePlannedRequest(t *testing.T) {
	good := []struct {
		value string
		want  PlannedRequest
	}{
		{"pdx", PlannedRequest{Target: "pdx"}},
		{"us-east-1a", PlannedRequest{Target: "us-east-1a"}},
		{"pdx:maxLagWait=30s", PlannedRequest{Target: "pdx", MaxLagWait: 30 * time.Second}},
		{"pdx:maxLagWait=1m30s", PlannedRequest{Target: "pdx", MaxLagWait: 90 * time.Second}},
		{"pdx:maxLagWait=500ms", PlannedRequest{Target: "pdx", MaxLagWait: 500 * time.Millisecond}},
		{"pdx:maxLagWait=1.5s", PlannedRequest{Target: "pdx", MaxLagWait: 1500 * time.Millisecond}},
		{"pdx:maxLagWait=24h", PlannedRequest{Target: "pdx", MaxLagWait: 24 * time.Hour}},
		{"0:maxLagWait=1s", PlannedRequest{Target: "0", MaxLagWait: time.Second}},
		{strings.Repeat("a", 40), PlannedRequest{Target: strings.Repeat("a", 40)}},
	}
	for _, c := range good {
		got, err := ParsePlannedRequest(c.value)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.value, got, err, c.want)
		}
	}
	bad := []struct{ value, says string }{
		{"", "no target"},
		{":maxLagWait=1s", "no target"},
		{"PDX", "DNS label"},
		{" pdx", "DNS label"},
		{"pdx ", "DNS label"},
		{"pdx\n", "DNS label"},
		{"-pdx", "DNS label"},
		{"pdx-", "DNS label"},
		{"pd_x", "DNS label"},
		{"pdx.example", "DNS label"},
		{strings.Repeat("a", 41), "longer than 40"},
		{"pdx:", "nothing after"},
		{"pdx:maxLagWait", "not key=value"},
		{"pdx:maxLagWait=", "not a duration"},
		{"pdx:maxLagWait=30", "not a duration"},
		{"pdx:maxLagWait=-1s", "not a duration"},
		{"pdx:maxLagWait=+1s", "not a duration"},
		{"pdx:maxLagWait=0s", "positive"},
		{"pdx:maxLagWait=25h", "longer than"},
		{"pdx:maxLagWait=1s ", "not a duration"},
		{"pdx:maxLagWait=1S", "not a duration"},
		{"pdx:maxLagWait=1us", "not a duration"},
		{"pdx:maxlagwait=1s", "unknown option"},
		{"pdx:MaxLagWait=1s", "unknown option"},
		{"pdx:drainTimeout=1s", "unknown option"},
		{"pdx: maxLagWait=1s", "unknown option"},
		{"pdx:maxLagWait=1s,maxLagWait=2s", "twice"},
		{"pdx:maxLagWait=1s,", "not key=value"},
		{"pdx:maxLagWait=1s:x", "not a duration"},
		{"pdx:maxLagWait=1s=2s", "not a duration"},
		{"pdx,iad", "DNS label"},
		{"pdx=1", "DNS label"},
	}
	for _, c := range bad {
		got, err := ParsePlannedRequest(c.value)
		if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %+v %v, want ErrInvalidRequest saying %q", c.value, got, err, c.says)
		}
		if got != (PlannedRequest{}) {
			t.Errorf("%q: a rejected value returned %+v", c.value, got)
		}
	}
}

// The parser never panics and either accepts a well-formed value or says why not.
func FuzzParsePlannedRequest(f *testing.F) {
	for _, s := range []string{"pdx", "pdx:maxLagWait=30s", "pdx:", ":", "a:maxLagWait=1s,maxLagWait=1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		r, err := ParsePlannedRequest(value)
		switch {
		case err != nil && !errors.Is(err, ErrInvalidRequest):
			t.Fatalf("%q: error %v does not wrap ErrInvalidRequest", value, err)
		case err == nil && (checkSite(r.Target) != nil || r.MaxLagWait < 0 || r.MaxLagWait > MaxRequestLagWait):
			t.Fatalf("%q: accepted %+v", value, r)
		case err == nil && !strings.HasPrefix(value, r.Target):
			t.Fatalf("%q: target %q", value, r.Target)
		}
	})
}
