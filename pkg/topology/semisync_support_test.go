package topology

import (
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestSemiSyncAvailability(t *testing.T) {
	has := func(site string) SemiSyncSupport { return SemiSyncSupport{Site: site, Observed: true} }
	lacks := func(site string) SemiSyncSupport {
		return SemiSyncSupport{Site: site, Observed: true, Missing: "plugin semisync_source"}
	}
	tests := []struct {
		name              string
		enabled, required bool
		sites             []SemiSyncSupport
		unavailable       bool
		reason            string
		names             []string // sites the message names
	}{
		{"off: nothing to say, whatever the servers", false, false, []SemiSyncSupport{lacks("a")},
			false, v1alpha1.ReasonSemiSyncOff, nil},
		{"every site has it", true, true, []SemiSyncSupport{has("a"), has("b")},
			false, v1alpha1.ReasonSemiSyncAvailable, nil},
		{"a replica lacks the plugins", true, false, []SemiSyncSupport{has("a"), lacks("b")},
			true, v1alpha1.ReasonSemiSyncPluginMissing, []string{"b lacks plugin semisync_source"}},
		{"required: says it is never made writable", true, true, []SemiSyncSupport{lacks("a"), has("b")},
			true, v1alpha1.ReasonSemiSyncPluginMissing, []string{"a lacks", "never made writable"}},
		{"every site named", true, false, []SemiSyncSupport{lacks("a"), lacks("b")},
			true, v1alpha1.ReasonSemiSyncPluginMissing, []string{"a lacks", "b lacks"}},
		{"a site never observed says nothing", true, true, []SemiSyncSupport{has("a"), {Site: "b", Missing: "x"}},
			false, v1alpha1.ReasonSemiSyncAvailable, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			un, reason, msg := SemiSyncAvailability(tc.enabled, tc.required, tc.sites)
			if un != tc.unavailable || reason != tc.reason {
				t.Fatalf("got %v %s (%s), want %v %s", un, reason, msg, tc.unavailable, tc.reason)
			}
			for _, n := range tc.names {
				if !strings.Contains(msg, n) {
					t.Fatalf("message %q does not say %q", msg, n)
				}
			}
		})
	}
}

// TestSourceOffSafe (issue 15, gap 7): the source part, which releases
// waiting commits with OK when turned off, is turned off only on a site
// that refuses client writes.
func TestSourceOffSafe(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		fenced, maybeWritable bool
		want                  bool
	}{
		{"fenced replica: off", true, false, true},
		{"writable (a former primary seen again): kept", false, false, false},
		{"fenced but a promotion of it is unclear: kept", true, true, false},
		{"writable and unclear: kept", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SourceOffSafe(tc.fenced, tc.maybeWritable); got != tc.want {
				t.Fatalf("SourceOffSafe(%v, %v) = %v, want %v", tc.fenced, tc.maybeWritable, got, tc.want)
			}
		})
	}
}
