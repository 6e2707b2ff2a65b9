package failover

import (
	"slices"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// receivedAhead: a wrote A:1-10 and is seen down (SQL still reaches it, so
// it is fenced by SQL); b applied A:1-8; c applied only A:1-7 but its IO
// thread received A:1-10 (under semi-sync it acknowledged A:9-10).
func receivedAhead(w *world) {
	w.addSite("c")
	primarySeenDownButSQLAnswers(w)
	w.sites["c"].retrieved = gtid.MustParseSet(uuidA + ":1-10")
	w.sites["c"].relay = gtid.MustParseSet(uuidA + ":8-10")
}

// TestEmergencyRankedOnReceived: the replica that received the most is
// promoted once its relay log is applied; when its relay log no longer
// holds what its probe showed received (lost to a restart since), it is
// not promoted on that ranking, and the next pass, ranking it on what it
// executed, moves the failover to the site that holds the most.
func TestEmergencyRankedOnReceived(t *testing.T) {
	cases := []struct {
		name     string
		lost     bool
		to       string
		promoted string
	}{
		{"relay log holds what it received: promoted with it", false, "c", uuidA + ":1-10"},
		{"relay log lost since the probe: retargeted to the freshest", true, "b", uuidA + ":1-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			receivedAhead(w)
			if tc.lost {
				w.sites["c"].relay = gtid.Set{}
			}
			e := NewEmergency(w.env())
			w.relayMemo = e
			var atPromote gtid.Set
			w.onPromote = func(site string) { atPromote = w.sites[site].executed }
			out, err := run(t, w, e)
			if err != nil {
				t.Fatal(err)
			}
			if tc.lost {
				if out.Completed || w.promotes["c"] != 0 || !slices.Contains(w.events, v1alpha1.EventRelayLogShort) {
					t.Fatalf("first pass: outcome %+v promotes %v events %v", out, w.promotes, w.events)
				}
				if out, err = run(t, w, e); err != nil || !out.Completed {
					t.Fatalf("second pass: outcome %+v err %v", out, err)
				}
			}
			assertCompleted(t, w, tc.to, "")
			if w.promotes["c"]+w.promotes["b"] != 1 || !atPromote.Equal(gtid.MustParseSet(tc.promoted)) {
				t.Fatalf("promotes %v, target held %s when promoted, want %s", w.promotes, atPromote, tc.promoted)
			}
			if !tc.lost && slices.Contains(w.events, v1alpha1.EventRelayLogShort) {
				t.Fatalf("events %v: a relay log that held everything reported short", w.events)
			}
		})
	}
}
