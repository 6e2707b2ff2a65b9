package sidecar

import (
	"math"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// forged returns view(active, gen, obs) with its signature made by key
// (OtherSigner: a key no test sidecar accepts), or changed after signing
// (tamper), or removed (unsigned).
func forgedBy(s *protocol.Signer, active string, gen int64) v1alpha1.ActiveSiteView {
	return s.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: active, Generation: gen,
		ObservedAt: t0, Operator: "test-op"})
}

func tampered(active string, gen int64) v1alpha1.ActiveSiteView {
	v := view("iad", 3, 0)
	v.ActiveSite, v.Generation = active, gen
	return v
}

func unsigned(active string, gen int64) v1alpha1.ActiveSiteView {
	v := view(active, gen, 0)
	v.KeyID, v.Signature = "", nil
	return v
}

// forgedCases: views that must never be adopted and never renew the lease,
// whoever serves them; each is listed in the Decision (to be counted under
// its reason) and the lease runs out as if nothing had been heard. iad is
// the active site at generation 3 (learned at 0 s); every bad answer comes
// at 15 s, and at 20 s the lease has run out.
var forgedCases = []struct {
	name   string
	answer Reply
	want   error
	reason string
}{
	{"unsigned, huge generation", op(unsigned("pdx", math.MaxInt64)), protocol.ErrUnsigned, RejectUnsigned},
	{"unsigned, naming this site (would renew)", op(unsigned("iad", 3)), protocol.ErrUnsigned, RejectUnsigned},
	{"signed by an unknown key, huge generation", op(forgedBy(OtherSigner, "pdx", math.MaxInt64)), protocol.ErrUnknownKey, RejectUnknownKey},
	{"a genuine view with its generation raised to 2^63-1", op(tampered("iad", math.MaxInt64)), protocol.ErrBadSignature, RejectBadSignature},
	{"a genuine view retargeted to another site", op(tampered("pdx", 3)), protocol.ErrBadSignature, RejectBadSignature},
	{"a key id swapped for an accepted one on a foreign signature", op(func() v1alpha1.ActiveSiteView {
		v := forgedBy(OtherSigner, "pdx", 9)
		v.KeyID = TestSigner.KeyID()
		return v
	}()), protocol.ErrBadSignature, RejectBadSignature},
	{"replayed: a genuine view of an older generation", op(view("iad", 2, 14*time.Second)), ErrOlderView, RejectOlder},
	{"a genuine view of another group", op(Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "billing",
		ActiveSite: "iad", Generation: 9})), ErrForeignView, RejectForeign},
}

func TestLoopRefusesForgedViews(t *testing.T) {
	for _, c := range forgedCases {
		for _, from := range []string{"", "pdx"} {
			t.Run(c.name+" from "+targetName(from), func(t *testing.T) {
				l, err := NewLoop(testSettings, t0)
				if err != nil {
					t.Fatal(err)
				}
				l.Tick(Observation{Now: t0, DB: DBWritable, Operator: op(view("iad", 3, 0))})
				if d := l.Offer(t0.Add(15*time.Second), from, c.answer, DBWritable); d.Adopted || d.Fence {
					t.Fatalf("Offer acted on it: %+v", d)
				}
				obs := Observation{Now: t0.Add(15 * time.Second), DB: DBWritable}
				if from == "" {
					obs.Operator = c.answer
				} else {
					obs.Peers = []PeerReply{peer(from, c.answer)}
				}
				d := l.Tick(obs)
				checkStep(t, 0, l, step{active: "iad", gen: 3, source: "operator", ignored: []error{c.want}}, d)
				if got := RejectReason(d.Ignored[0].Err); got != c.reason {
					t.Fatalf("reason %q, want %q", got, c.reason)
				}
				if st := l.State(); !st.LastContact.Equal(t0) {
					t.Fatalf("the lease was renewed at %s", st.LastContact.Sub(t0))
				}
				if d := l.Check(t0.Add(20*time.Second), DBWritable); !d.Fence || d.Reason != ReasonLease {
					t.Fatalf("at the lease deadline: %+v, want a lease fence", d)
				}
			})
		}
	}
}

// TestLoopFloor: a loop started with an earlier process's floor never
// adopts a view below it, even as its first view, and never relays a view
// before the operator answered it.
func TestLoopFloor(t *testing.T) {
	s := testSettings
	s.Floor = 5
	l, err := NewLoop(s, t0)
	if err != nil {
		t.Fatal(err)
	}
	d := l.Tick(Observation{Now: t0, DB: DBReadOnly, Peers: []PeerReply{peer("pdx", op(view("iad", 4, 0)))}})
	checkStep(t, 0, l, step{ignored: []error{ErrOlderView}}, d)
	// A peer's relay carries a Seq (unsigned): the echo never takes it.
	relayed := view("pdx", 5, 0)
	relayed.Seq = 999
	d = l.Tick(Observation{Now: t0.Add(time.Second), DB: DBReadOnly, Peers: []PeerReply{peer("pdx", op(relayed))}})
	checkStep(t, 1, l, step{active: "pdx", gen: 5, source: "peer/pdx", adopted: true}, d)
	if _, ok := l.Relay(); ok {
		t.Fatal("relays a peer's view before the operator answered")
	}
	if e := l.OperatorEcho(); e != (Echo{}) {
		t.Fatalf("echo of a peer's relay %+v", e)
	}
	served := view("pdx", 5, time.Second)
	served.Seq = 3
	l.Tick(Observation{Now: t0.Add(2 * time.Second), DB: DBReadOnly, Operator: op(served)})
	if v, ok := l.Relay(); !ok || v.Generation != 5 || TestKeys.Verify(v) != nil {
		t.Fatalf("relay after the operator: %+v %v", v, ok)
	}
	if e := l.OperatorEcho(); e.Operator != "test-op" || e.Seq != 3 || !e.ObservedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("echo %+v", e)
	}
}
