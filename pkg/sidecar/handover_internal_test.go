package sidecar

import (
	"errors"
	"testing"
	"time"
)

// primaryLoop is the loop of iad's sidecar that heard the operator name iad
// at generation 7, at t0.
func primaryLoop(t *testing.T, active string) *Loop {
	t.Helper()
	l, err := NewLoop(testSettings, t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	l.Tick(Observation{Now: t0, DB: DBWritable, Operator: op(view(active, 7, 0))})
	return l
}

// reexec hands l's state at now to a new loop started after elapsed, as a
// re-exec would, with floor from the floor file.
func reexec(t *testing.T, l *Loop, now time.Time, elapsed time.Duration, floor int64) (*Loop, error) {
	t.Helper()
	h := l.handover(now)
	s := testSettings
	s.Floor = floor
	n, err := NewLoop(s, now.Add(elapsed))
	if err != nil {
		t.Fatal(err)
	}
	return n, n.restore(h, now.Add(elapsed), elapsed)
}

// TestHandoverNeverUnfencesNorForgets is the attacker's view of a re-exec:
// whatever the handover, the new process fences at least whenever the old
// one would have, and never adopts a generation below one already seen.
func TestHandoverNeverUnfencesNorForgets(t *testing.T) {
	now := t0.Add(5 * time.Second)
	cases := []struct {
		name    string
		active  string
		tamper  func(*Handover)
		elapsed time.Duration
		floor   int64
		// refused: the handover is not taken (a fresh boot follows).
		refused bool
		// fence: the rule fences a writable mysqld right after the re-exec.
		fence bool
	}{
		{name: "the primary keeps its lease", active: "iad", elapsed: 100 * time.Millisecond},
		{name: "a replica's view naming another site still fences", active: "pdx", elapsed: 100 * time.Millisecond, fence: true},
		{name: "a view below the floor file is refused", active: "iad", floor: 8, refused: true, fence: true},
		{name: "a forged view is refused", active: "iad", tamper: func(h *Handover) { h.View.Generation = 99 }, refused: true, fence: true},
		{name: "another site's handover is refused", active: "iad", tamper: func(h *Handover) { h.Site = "pdx" }, refused: true, fence: true},
		{name: "a stale handover is refused", active: "iad", elapsed: time.Hour, refused: true, fence: true},
		{name: "a handover from the future is refused", active: "iad", elapsed: -time.Second, refused: true, fence: true},
		{name: "a lease that ran out during the exec fences", active: "iad", elapsed: 20 * time.Second, fence: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := primaryLoop(t, c.active)
			h := l.handover(now)
			if c.tamper != nil {
				v := *h.View
				h.View = &v
				c.tamper(&h)
			}
			s := testSettings
			s.Floor = c.floor
			at := now.Add(c.elapsed)
			n, err := NewLoop(s, at)
			if err != nil {
				t.Fatal(err)
			}
			err = n.restore(h, at, c.elapsed)
			if refused := errors.Is(err, ErrBadHandover); refused != c.refused {
				t.Fatalf("restore: %v, want refused %v", err, c.refused)
			}
			if fence, _ := n.rule(at, DBWritable); fence != c.fence {
				t.Fatalf("fence after the re-exec %v, want %v", fence, c.fence)
			}
			if n.Floor() < 7 && !c.refused {
				t.Fatalf("floor %d after the re-exec, below the generation 7 already seen", n.Floor())
			}
			if c.refused && n.Floor() != c.floor {
				t.Fatalf("a refused handover changed the floor to %d", n.Floor())
			}
			if fence, _ := n.rule(at, DBReadOnly); fence {
				t.Fatal("a read-only mysqld is never touched")
			}
		})
	}
}

// TestRepeatedReexecsNeverRenewTheLease: a re-exec loop (an attacker able
// to trigger restarts in place) must not stretch the lease: the deadline
// stays the one the last real contact set.
func TestRepeatedReexecsNeverRenewTheLease(t *testing.T) {
	l := primaryLoop(t, "iad")
	want := l.LeaseDeadline()
	now := t0
	for i := range 50 {
		now = now.Add(time.Second)
		n, err := reexec(t, l, now, 10*time.Millisecond, 7)
		if err != nil {
			t.Fatalf("re-exec %d: %v", i, err)
		}
		now = now.Add(10 * time.Millisecond)
		if got := n.LeaseDeadline(); got.After(want) {
			t.Fatalf("re-exec %d: lease deadline %s, later than %s set by the last contact", i, got, want)
		}
		l = n
	}
	if fence, reason := l.rule(now, DBWritable); !fence || reason != ReasonLease {
		t.Fatalf("after 50 s of re-execs without contact: fence %v (%s), want a lease fence", fence, reason)
	}
}

// TestHandoverBeforeTheOperatorKeepsTheBootNet: a process that had not
// heard the operator hands that over; the boot safety net stays.
func TestHandoverBeforeTheOperatorKeepsTheBootNet(t *testing.T) {
	l, err := NewLoop(testSettings, t0)
	if err != nil {
		t.Fatal(err)
	}
	l.Tick(Observation{Now: t0, DB: DBWritable, Peers: []PeerReply{peer("pdx", op(view("iad", 7, 0)))}})
	n, err := reexec(t, l, t0.Add(time.Second), time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fence, reason := n.rule(t0.Add(time.Second), DBWritable); !fence || reason != ReasonBoot {
		t.Fatalf("fence %v (%s), want the boot fence", fence, reason)
	}
	if _, ok := n.Relay(); ok {
		t.Fatal("relays a peer's view before the operator answered")
	}
	if v, _ := n.View(); v.Generation != 7 || v.ActiveSite != "iad" {
		t.Fatalf("view %+v: the generation seen was forgotten", v)
	}
}

func TestHandoverEncoding(t *testing.T) {
	l := primaryLoop(t, "iad")
	h := l.handover(t0)
	got, err := DecodeHandover(EncodeHandover(h))
	if err != nil || got.View == nil || got.View.Generation != h.View.Generation || string(got.View.Signature) != string(h.View.Signature) || got.ContactAge != h.ContactAge {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if _, err := DecodeHandover("{"); !errors.Is(err, ErrBadHandover) {
		t.Fatalf("garbage: %v", err)
	}
	if h, err := DecodeHandover(""); h != nil || err != nil {
		t.Fatalf("empty: %+v, %v", h, err)
	}
}
