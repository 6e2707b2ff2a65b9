package failover

import (
	"testing"
	"time"
)

func TestConfirmFence(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	base := func() Evidence {
		return Evidence{Site: "a", Active: "b", Now: at(1), FailingSince: at(0), LastContact: at(0),
			LeaseTimeout: 1500 * time.Millisecond, PeerCheckInterval: 500 * time.Millisecond}
	}
	cases := []struct {
		name string
		mod  func(ev *Evidence)
		ok   bool
		by   string
	}{
		{"no evidence before the deadline", func(*Evidence) {}, false, ""},
		{"pod gone", func(ev *Evidence) { ev.PodGone = true }, true, ConfirmedByPodGone},
		{"report of mysqld down after the failure", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), MysqldDown: true}
		}, true, ConfirmedBySidecarReport},
		{"report of fenced after the failure", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true}
		}, true, ConfirmedBySidecarReport},
		{"report of fenced before the failure does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(-0.5), Fenced: true}
		}, false, ""},
		{"report of up and writable does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5)}
		}, false, ""},
		{"a report while the site is not failing does not count", func(ev *Evidence) {
			ev.FailingSince = time.Time{}
			ev.Report = &Report{At: at(0.5), Fenced: true}
		}, false, ""},
		{"exactly at the deadline is not past it", func(ev *Evidence) { ev.Now = at(2) }, false, ""},
		{"past last contact + leaseTimeout + peerCheckInterval", func(ev *Evidence) { ev.Now = at(2.01) }, true, ConfirmedByLease},
		{"the active site's lease never runs out", func(ev *Evidence) { ev.Now, ev.Active = at(60), "a" }, false, ""},
		{"a peer not yet on the current generation holds the deadline", func(ev *Evidence) {
			ev.Now = at(60)
			ev.Peers = []PeerAdoption{{Site: "b"}}
		}, false, ""},
		{"a peer whose Pod is gone does not", func(ev *Evidence) {
			ev.Now = at(60)
			ev.Peers = []PeerAdoption{{Site: "b", PodGone: true}}
		}, true, ConfirmedByLease},
		{"a peer's late adoption moves the deadline", func(ev *Evidence) {
			ev.Now = at(2.5)
			ev.Peers = []PeerAdoption{{Site: "b", Adopted: true, At: at(1)}}
		}, false, ""},
		{"past the deadline counted from the peer's adoption", func(ev *Evidence) {
			ev.Now = at(3.01)
			ev.Peers = []PeerAdoption{{Site: "b", Adopted: true, At: at(1)}}
		}, true, ConfirmedByLease},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := base()
			c.mod(&ev)
			ok, by := ConfirmFence(ev)
			if ok != c.ok || by != c.by {
				t.Fatalf("ConfirmFence = %v %q, want %v %q", ok, by, c.ok, c.by)
			}
		})
	}
}
