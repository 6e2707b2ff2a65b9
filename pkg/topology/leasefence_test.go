package topology

import (
	"testing"
	"time"
)

// TestWritableLeaseFence: the operator's arm of mysqld's lease fence before
// a site is made writable (lease 20 s, peerCheckInterval 5 s, a statement
// timeout of 2 s unless a case says otherwise).
func TestWritableLeaseFence(t *testing.T) {
	const lease, tick, margin = 20 * time.Second, 5 * time.Second, 2 * time.Second
	now := t0.Add(time.Hour)
	cases := []struct {
		name        string
		asked       time.Duration // before now; -2: never
		lease, tick time.Duration
		margin      time.Duration
		want        time.Duration // 0: refused, or none when none is set
		none        bool          // no fence for this lease: none armed, not refused
		late        bool          // the least fence: it may fire up to MinLeaseFence past the deadline
	}{
		{"asked just now: the whole lease and a tick, less slack and margin", 0, lease, tick, margin, 22 * time.Second, false, false},
		{"asked a tick ago", tick, lease, tick, margin, 17 * time.Second, false, false},
		{"asked two ticks ago, the most the gate lets through", 2 * tick, lease, tick, margin, 12 * time.Second, false, false},
		{"a longer statement timeout arms sooner", tick, lease, tick, 5 * time.Second, 14 * time.Second, false, false},
		{"an ask recorded after now counts as now", -time.Second, lease, tick, margin, 22 * time.Second, false, false},
		{"exactly the least fence", 0, 3 * time.Second, time.Second, time.Second, 2 * time.Second, false, false},
		{"a lease too short for any fence: none, as the sidecar arms none", 0, 3 * time.Second, time.Second, 1500 * time.Millisecond, 0, true, false},
		{"a lease too short for any fence, never asked: none", -2, 1500 * time.Millisecond, 500 * time.Millisecond, margin, 0, true, false},
		{"a short lease asked within the gate: the least fence, not a refusal that blocks every step",
			2 * time.Second, 4 * time.Second, time.Second, time.Second, MinLeaseFence, false, true},
		{"a short lease asked longer ago than the gate allows", 3 * time.Second, 4 * time.Second, time.Second, time.Second, 0, false, false},
		{"the lease ran out long ago", time.Minute, lease, tick, margin, 0, false, false},
		{"never asked this process", -2, lease, tick, margin, 0, false, false},
		{"no lease configured", 0, 0, tick, margin, 0, false, false},
		{"no peerCheckInterval configured", 0, lease, 0, margin, 0, false, false},
		{"negative margin", 0, lease, tick, -time.Second, 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := LeaseFenceArm{Site: "pdx", Now: now, LeaseTimeout: c.lease, PeerCheckInterval: c.tick, Margin: c.margin}
			if c.asked != -2 {
				a.SidecarAskedAt = now.Add(-c.asked)
			}
			d := WritableLeaseFence(a)
			after := d.After
			if after != c.want || (after == 0 && !c.none) != (d.Refused != "") {
				t.Fatalf("got %+v, want %s (none %v)", d, c.want, c.none)
			}
			if after == 0 {
				return
			}
			// Sent now, run within the margin, counted in whole seconds and
			// run late by the scheduler: it still fences before this
			// operator's own lease deadline for the site lets it promote
			// another.
			dl, ok := LeaseDeadline(Evidence{Site: "pdx", Active: "iad", LastContact: a.SidecarAskedAt,
				LeaseTimeout: c.lease, PeerCheckInterval: c.tick})
			latest := now.Add(c.margin + after + LeaseFenceSchedulerSlack)
			if c.late {
				dl = dl.Add(MinLeaseFence)
			}
			if !ok || latest.After(dl) {
				t.Fatalf("fires by %s, after the lease deadline %s", latest, dl)
			}
		})
	}
}
