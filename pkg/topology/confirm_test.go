package topology

import (
	"testing"
	"time"
)

func TestConfirmFence(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	base := func() Evidence {
		return Evidence{Site: "a", Active: "b", Operator: "op1", Now: at(1), FailingSince: at(0), FailingSeq: 10, LastContact: at(0),
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
			ev.Report = &Report{At: at(0.5), MysqldDown: true, ViewOperator: "op1", ViewSeq: 12}
		}, true, ConfirmedBySidecarReport},
		{"report of fenced after the failure", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 12}
		}, true, ConfirmedBySidecarReport},
		{"a read after the first view served once the failure was seen counts", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 10}
		}, true, ConfirmedBySidecarReport},
		{"report of fenced before the failure does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(-0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 3}
		}, false, ""},
		// Issue 13, path 7: the report arrives after the failure was seen,
		// but it describes a mysqld read made before (it echoes a view the
		// operator served before the failure): a re-assert may have undone
		// that fence since.
		{"a late report describing a read before the failure does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 9}
		}, false, ""},
		// The operator's wall clock stepped back between serving the view
		// the report echoes and first seeing the failure: by the clock the
		// view looks served after the failure. The sequence says before.
		{"a view served before the failure, across a clock step back, does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 9}
			ev.FailingSince = at(-10) // the stepped-back clock's reading
		}, false, ""},
		{"a report echoing another operator process's view does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op0", ViewSeq: 12}
		}, false, ""},
		{"a report without an echo (an older sidecar, or none heard) does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), Fenced: true}
		}, false, ""},
		{"an echo cannot stand in for an operator without an id", func(ev *Evidence) {
			ev.Operator = ""
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewSeq: 12}
		}, false, ""},
		{"report of up and writable does not count", func(ev *Evidence) {
			ev.Report = &Report{At: at(0.5), ViewOperator: "op1", ViewSeq: 12}
		}, false, ""},
		{"a report while the site is not failing does not count", func(ev *Evidence) {
			ev.FailingSince, ev.FailingSeq = time.Time{}, 0
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 12}
		}, false, ""},
		{"exactly at the deadline is not past it", func(ev *Evidence) { ev.Now = at(2) }, false, ""},
		{"past last contact + leaseTimeout + peerCheckInterval", func(ev *Evidence) { ev.Now = at(2.01) }, true, ConfirmedByLease},
		{"the active site's lease never runs out", func(ev *Evidence) { ev.Now, ev.Active = at(60), "a" }, false, ""},
		{"a peer not yet on the current generation holds the deadline", func(ev *Evidence) {
			ev.Now = at(60)
			ev.Peers = []PeerAdoption{{Site: "b"}}
		}, false, ""},
		{"a peer whose Pod went away at an unknown time holds it too", func(ev *Evidence) {
			ev.Now = at(60)
			ev.Peers = []PeerAdoption{{Site: "b", PodGone: true}}
		}, false, ""},
		{"a peer whose Pod went away before holding the generation does not", func(ev *Evidence) {
			ev.Now = at(60)
			ev.Peers = []PeerAdoption{{Site: "b", PodGone: true, GoneAt: at(1)}}
		}, true, ConfirmedByLease},
		{"a peer's late adoption moves the deadline", func(ev *Evidence) {
			ev.Now = at(2.5)
			ev.Peers = []PeerAdoption{{Site: "b", Adopted: true, At: at(1)}}
		}, false, ""},
		{"past the deadline counted from the peer's adoption", func(ev *Evidence) {
			ev.Now = at(3.01)
			ev.Peers = []PeerAdoption{{Site: "b", Adopted: true, At: at(1)}}
		}, true, ConfirmedByLease},
		// internal/sim script realop_thaw_after_held_reassert: made writable
		// under a write hold that refused the operator's arm, its mysqld
		// froze as the sidecar let go (so the sidecar's arm failed too), and
		// the sidecar paused: no event and no sidecar fence it ever.
		{"an unproven lease fence: no deadline ever passes", func(ev *Evidence) {
			ev.Now, ev.LeaseFenceUnproven = at(600), true
		}, false, ""},
		{"an unproven lease fence still yields to a gone Pod", func(ev *Evidence) {
			ev.Now, ev.LeaseFenceUnproven, ev.PodGone = at(600), true, true
		}, true, ConfirmedByPodGone},
		{"an unproven lease fence still yields to a later fenced report", func(ev *Evidence) {
			ev.Now, ev.LeaseFenceUnproven = at(600), true
			ev.Report = &Report{At: at(0.5), Fenced: true, ViewOperator: "op1", ViewSeq: 12}
		}, true, ConfirmedBySidecarReport},
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

// TestLeaseDeadline pins the base the deadline counts from: the old
// primary's last contact with the operator, or for every other site the
// moment from which it can no longer have served the old primary a view
// older than the current generation, whichever is latest.
func TestLeaseDeadline(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const lease, check = 12 * time.Second, 4 * time.Second
	cases := []struct {
		name  string
		last  float64 // the old primary's last contact with the operator
		peers []PeerAdoption
		want  float64 // the base; -1: no deadline
	}{
		{"no peers: the last contact", 10, nil, 10},
		{"a peer that held the generation before the last contact", 10,
			[]PeerAdoption{{Site: "pdx", Adopted: true, At: at(5)}}, 10},
		{"a peer that held the generation after the last contact", 10,
			[]PeerAdoption{{Site: "pdx", Adopted: true, At: at(14)}}, 14},
		{"the latest of several peers", 10,
			[]PeerAdoption{{Site: "pdx", Adopted: true, At: at(14)}, {Site: "fra", Adopted: true, At: at(12)}}, 14},
		{"a live peer not seen holding the generation: no deadline", 10,
			[]PeerAdoption{{Site: "pdx", Adopted: true, At: at(14)}, {Site: "fra"}}, -1},
		{"a peer whose Pod went away before reporting the generation: its departure", 10,
			[]PeerAdoption{{Site: "pdx", PodGone: true, GoneAt: at(20)}}, 20},
		{"a peer whose Pod went away early counts no earlier than the last contact", 10,
			[]PeerAdoption{{Site: "pdx", PodGone: true, GoneAt: at(3)}}, 10},
		{"a peer that held the generation, then went away: its adoption", 10,
			[]PeerAdoption{{Site: "pdx", PodGone: true, GoneAt: at(30), Adopted: true, At: at(14)}}, 14},
		{"a rescheduled peer whose new Pod has not reported the generation: no deadline", 10,
			[]PeerAdoption{{Site: "pdx", GoneAt: at(12)}}, -1},
		{"a rescheduled peer counts from its new Pod's report", 10,
			[]PeerAdoption{{Site: "pdx", GoneAt: at(12), Adopted: true, At: at(18)}}, 18},
		// Seed 10453 of the simulation: iad, the old primary, lost the operator at
		// 556 but still renewed its lease from pdx, which served generation 3
		// until its Pod was killed at 568. The deadline counts from 568 (584),
		// not from the last contact (572, when iad could still write until 580).
		{"seed 10453: the target's Pod went away while it served the old view", 556,
			[]PeerAdoption{{Site: "pdx", PodGone: true, GoneAt: at(568)}}, 568},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := Evidence{Site: "iad", Active: "pdx", LastContact: at(c.last), Peers: c.peers,
				LeaseTimeout: lease, PeerCheckInterval: check}
			got, ok := LeaseDeadline(ev)
			if c.want < 0 {
				if ok {
					t.Fatalf("LeaseDeadline = %s, want none", got.Sub(t0))
				}
				return
			}
			if want := at(c.want).Add(lease + check); !ok || !got.Equal(want) {
				t.Fatalf("LeaseDeadline = %s %v, want %s", got.Sub(t0), ok, want.Sub(t0))
			}
			ev.Now = got
			if ok, _ := ConfirmFence(ev); ok {
				t.Fatal("confirmed at the deadline")
			}
			ev.Now = got.Add(time.Millisecond)
			if ok, by := ConfirmFence(ev); !ok || by != ConfirmedByLease {
				t.Fatalf("past the deadline: ConfirmFence = %v %q", ok, by)
			}
		})
	}
}
