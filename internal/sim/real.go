package sim

import (
	"crypto/ed25519"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// simGroup names the simulated failover group in views; simOperator is the
// simulated operator's process id.
const (
	simGroup    = "sim"
	simOperator = "sim-operator"
)

// RealSidecar is a SidecarFactory that runs pkg/sidecar's Loop, the fencing
// decision the real sidecar makes, on the sim's logical clock.
func RealSidecar(s SidecarSettings, now time.Time) SidecarLoop {
	l, err := sidecar.NewLoop(sidecar.Settings{Namespace: simGroup, Group: simGroup, Site: s.Site,
		LeaseTimeout: s.LeaseTimeout, PeerCheckInterval: s.PeerCheckInterval, Keys: simSigs, Floor: s.Floor}, now)
	if err != nil {
		panic(fmt.Sprintf("sim config validated, yet sidecar settings are not: %v", err))
	}
	return &realSidecar{l: l, boot: s.Boot}
}

// realSidecar is one sidecar process: its Loop and its boot id.
type realSidecar struct {
	l    *sidecar.Loop
	boot string
}

// report is what the real runner sends with GET /active-site: the view it
// holds, its read of mysqld, and its echo of the operator's last view.
func (r *realSidecar) report(writable, up bool) sidecar.Report {
	rep := sidecar.Report{Site: s0(r.l), Boot: r.boot, View: r.l.OperatorEcho(), DB: sidecar.DBDown}
	if v, ok := r.l.View(); ok {
		rep.Generation = v.Generation
	}
	switch {
	case writable:
		rep.DB = sidecar.DBWritable
	case up:
		rep.DB = sidecar.DBReadOnly
	}
	return rep
}

// wake applies the lease rule before anything else, as the real runner
// does on every wake-up (enforceWake); it reports whether to fence.
func (r *realSidecar) wake(now time.Time, writable bool) bool {
	db := sidecar.DBReadOnly
	if writable {
		db = sidecar.DBWritable
	}
	return r.l.Check(now, db).Fence
}

// replyOf is the reply a view stands for: the real operator's answer or a
// real relay as it came; a view that carries neither is no view.
func replyOf(v View) sidecar.Reply {
	if v.reply != nil {
		return *v.reply
	}
	return sidecar.Reply{Kind: sidecar.ReplyNoView, Err: sidecar.ErrNoView}
}

func (r *realSidecar) Tick(now time.Time, operator *View, peers []View, writable bool) (bool, string) {
	o := sidecar.Observation{Now: now, DB: sidecar.DBReadOnly}
	if writable {
		o.DB = sidecar.DBWritable
	}
	if operator != nil {
		o.Operator = replyOf(*operator)
	}
	for _, p := range peers {
		o.Peers = append(o.Peers, sidecar.PeerReply{Peer: p.From, Reply: replyOf(p)})
	}
	o.Peers = append(o.Peers, impostor(s0(r.l))...)
	d := r.l.Tick(o)
	return d.Fence, d.Reason
}

// s0 is the site a loop runs for.
func s0(l *sidecar.Loop) string { return l.Settings().Site }

// impostor is what a forger answering on a peer's port serves in every tick
// of every real sidecar: views naming the sidecar's own site at generation
// 2^63-1, one unsigned and one carrying the operator's key id over a
// signature of other fields. The real Loop must refuse both, so they change
// nothing; if it adopted one, no operator view could ever replace it, and
// the checker would see the stale primary keep writing.
func impostor(site string) []sidecar.PeerReply {
	huge := v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: site,
		Generation: math.MaxInt64, Operator: simOperator}
	tampered := apiView(View{Active: site, Generation: 1})
	tampered.Generation = math.MaxInt64
	return []sidecar.PeerReply{{Peer: "impostor", Reply: sidecar.ViewReply(huge)},
		{Peer: "impostor", Reply: sidecar.ViewReply(tampered)}}
}

func (r *realSidecar) View() View {
	v, ok := r.l.View()
	if !ok {
		return View{}
	}
	return View{Active: v.ActiveSite, Generation: v.Generation, ObservedAt: v.ObservedAt}
}

// Relay is what the runner serves on /peer/active-site: nothing until the
// operator answered this process (issue 13, path 1).
func (r *realSidecar) Relay() View {
	v, ok := r.l.Relay()
	if !ok {
		return View{}
	}
	reply := sidecar.ViewReply(v)
	return View{Active: v.ActiveSite, Generation: v.Generation, ObservedAt: v.ObservedAt, reply: &reply}
}

// apiView is v as the sim's operator key signs it: what the impostor
// tampers with.
func apiView(v View) v1alpha1.ActiveSiteView {
	return simSigs.sign(v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: v.Active,
		Generation: v.Generation, ObservedAt: v.ObservedAt, Operator: simOperator})
}

// simSigner is the simulated operator's view-signing key (a fixed seed: the
// simulation is deterministic); simKeys is the ring every simulated sidecar
// accepts.
var simSigner, simKeys = func() (*protocol.Signer, *protocol.KeyRing) {
	s, err := protocol.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	k, err := protocol.NewKeyRing(s.Public())
	if err != nil {
		panic(err)
	}
	return s, k
}()

// simSigs remembers every signature made and checked, so that thousands of
// seeds do not spend their time in Ed25519: the same view is signed once and
// verified once. It is the verifier the simulated sidecars use; a view it
// has not seen is verified by the real key ring.
var simSigs = &sigCache{signed: map[string][]byte{}, verified: map[string]error{}}

// maxVerified bounds the verifications a sigCache remembers.
const maxVerified = 1 << 16

type sigCache struct {
	mu       sync.Mutex
	signed   map[string][]byte
	verified map[string]error
}

func (c *sigCache) sign(v v1alpha1.ActiveSiteView) v1alpha1.ActiveSiteView {
	v.KeyID = simSigner.KeyID()
	key := string(protocol.Payload(v))
	c.mu.Lock()
	defer c.mu.Unlock()
	if sig, ok := c.signed[key]; ok {
		v.Signature = sig
		return v
	}
	v = simSigner.Sign(v)
	c.signed[key] = v.Signature
	return v
}

// Verify implements sidecar.Verifier.
func (c *sigCache) Verify(v v1alpha1.ActiveSiteView) error {
	key := string(protocol.Payload(v)) + "\x00" + string(v.Signature)
	c.mu.Lock()
	defer c.mu.Unlock()
	err, ok := c.verified[key]
	if !ok {
		err = verifySim(v)
		if len(c.verified) >= maxVerified {
			clear(c.verified) // the real operator's views never repeat: keep memory bounded
		}
		c.verified[key] = err
	}
	return err
}
