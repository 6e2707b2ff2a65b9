package topology

import (
	"testing"
	"time"
)

// TestSilentLeaseFence: a writable active site whose sidecar stopped
// asking gets its lease fence armed by the operator, counted from the last
// ask, so it fires when the sidecar's own lease would have run out.
// Found with the operator waiting for a reported generation: in
// realop_asked_then_paused.txt the sidecar let go of its write hold in
// the tick its mysqld froze, could not arm the event, and paused; mysqld
// thawed writable with no event, and pdx was promoted beside it.
func TestSilentLeaseFence(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	arm := func(askedAgo time.Duration) LeaseFenceArm {
		a := LeaseFenceArm{Site: "iad", Now: now, LeaseTimeout: 6 * time.Second, PeerCheckInterval: 2 * time.Second,
			Margin: time.Second}
		if askedAgo >= 0 {
			a.SidecarAskedAt = now.Add(-askedAgo)
		}
		return a
	}
	cases := []struct {
		name  string
		arm   LeaseFenceArm
		after time.Duration
		ok    bool
	}{
		{"the sidecar asks: it arms the event itself", arm(time.Second), 0, false},
		{"silent for a peerCheckInterval: armed from its last ask", arm(2 * time.Second), 4 * time.Second, true},
		{"silent longer: what is left of its lease", arm(3 * time.Second), 3 * time.Second, true},
		{"its lease about to run out: the least arm", arm(5 * time.Second), MinLeaseFence, true},
		{"never asked this operator: nothing to count from", arm(-1), 0, false},
		{"a lease too short for any lease fence",
			func() LeaseFenceArm { a := arm(3 * time.Second); a.LeaseTimeout = time.Second; return a }(), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			after, ok := SilentLeaseFence(tc.arm)
			if ok != tc.ok || after != tc.after {
				t.Fatalf("SilentLeaseFence = %s %v, want %s %v", after, ok, tc.after, tc.ok)
			}
		})
	}
}
