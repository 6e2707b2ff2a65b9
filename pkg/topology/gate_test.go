package topology

import (
	"testing"
	"time"
)

func TestMayMakeWritable(t *testing.T) {
	const poll, probe = 2 * time.Second, 2 * time.Second
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name                   string
		started, observed, now time.Duration
		ok                     bool
	}{
		{"fresh snapshot", 0, 50 * time.Millisecond, 300 * time.Millisecond, true},
		{"a hung probe took its whole bound: still fresh", 0, probe, probe + time.Second, true},
		{"exactly one poll interval old", 0, time.Second, time.Second + poll, true},
		{"paused between observe and act", 0, 50 * time.Millisecond, 50*time.Millisecond + poll + time.Millisecond, false},
		{"paused while observing", 0, probe + poll + time.Second, probe + poll + time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, why := MayMakeWritable(ActCheck{ObserveStarted: at(c.started), ObservedAt: at(c.observed),
				Now: at(c.now), PollInterval: poll, ProbeTimeout: probe})
			if ok != c.ok || (!ok && why == "") {
				t.Fatalf("got %v (%s), want %v", ok, why, c.ok)
			}
		})
	}
	if ok, _ := MayMakeWritable(ActCheck{Now: t0, PollInterval: poll}); ok {
		t.Fatal("no snapshot at all may not make a site writable")
	}
}

// TestMayMakeWritableSidecar: a site is made writable only while its
// sidecar asks the operator (peerCheckInterval 2 s).
func TestMayMakeWritableSidecar(t *testing.T) {
	const poll, probe, tick = time.Second, time.Second, 2 * time.Second
	cases := []struct {
		name  string
		asked time.Duration // before now; -1: never
		tick  time.Duration
		ok    bool
	}{
		{"asked on its last tick", tick, tick, true},
		{"a late tick: two intervals", 2 * tick, tick, true},
		{"silent longer: paused or gone", 2*tick + time.Millisecond, tick, false},
		{"never asked this process", -1, tick, false},
		{"no sidecar known to the caller: rule skipped", -1, 0, true},
	}
	now := t0.Add(time.Minute)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chk := ActCheck{ObserveStarted: now, ObservedAt: now, Now: now, PollInterval: poll, ProbeTimeout: probe,
				Site: "iad", PeerCheckInterval: c.tick}
			if c.asked >= 0 {
				chk.SidecarAskedAt = now.Add(-c.asked)
			}
			ok, why := MayMakeWritable(chk)
			if ok != c.ok || (!ok && why == "") {
				t.Fatalf("got %v (%s), want %v", ok, why, c.ok)
			}
		})
	}
}
