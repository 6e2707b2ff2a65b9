package sidecar

import (
	"testing"
	"time"
)

// TestLoopLeaseFence: when the sidecar arms mysqld's lease fence, and for
// how long (testSettings: lease 20 s, peerCheckInterval 5 s).
func TestLoopLeaseFence(t *testing.T) {
	const margin = time.Second
	cases := []struct {
		name   string
		active string        // the operator's view at t0; "" for none
		at     time.Duration // when LeaseFence is asked, after the contact at t0
		db     DBState
		want   time.Duration // 0: not armed
	}{
		{"writable primary right after a contact: lease + interval - scheduler slack - margin", "iad", 0, DBWritable, 23 * time.Second},
		{"later in the lease, less", "iad", 15 * time.Second, DBWritable, 8 * time.Second},
		{"near the lease's end", "iad", 19500 * time.Millisecond, DBWritable, 3500 * time.Millisecond},
		{"lease over: the sidecar fences instead", "iad", 20 * time.Second, DBWritable, 0},
		{"read-only mysqld: nothing to guard", "iad", 0, DBReadOnly, 0},
		{"unknown mysqld (a read that timed out): armed, so an earlier arm does not fire", "iad", 0, DBUnknown, 23 * time.Second},
		{"mysqld down: nothing to guard", "iad", 0, DBDown, 0},
		{"view names another site: the sidecar fences instead", "pdx", 0, DBWritable, 0},
		{"no view yet: the boot fence holds", "", 0, DBWritable, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewLoop(testSettings, t0)
			if err != nil {
				t.Fatal(err)
			}
			if c.active != "" {
				l.Tick(Observation{Now: t0, DB: DBReadOnly, Operator: op(view(c.active, 1, 0))})
			}
			got, arm := l.LeaseFence(t0.Add(c.at), c.db, margin)
			if arm != (c.want > 0) || got != c.want {
				t.Fatalf("LeaseFence = %s, %v; want %s", got, arm, c.want)
			}
		})
	}
	// A short lease: never armed for under two seconds, which could fire
	// within a second of the arm.
	short := testSettings
	short.LeaseTimeout, short.PeerCheckInterval = 3*time.Second, time.Second
	l, err := NewLoop(short, t0)
	if err != nil {
		t.Fatal(err)
	}
	l.Tick(Observation{Now: t0, DB: DBReadOnly, Operator: op(view("iad", 1, 0))})
	for at, want := range map[time.Duration]time.Duration{0: 2 * time.Second, 500 * time.Millisecond: 0} {
		if got, _ := l.LeaseFence(t0.Add(at), DBWritable, margin); got != want {
			t.Errorf("short lease at %s: LeaseFence = %s, want %s", at, got, want)
		}
	}
}
