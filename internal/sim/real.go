package sim

import (
	"crypto/ed25519"
	"math"
	"sync"

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

// impostor is what a forger answering on a peer's port serves in every
// gather of every sidecar (simGatherer), besides the real peers' answers: views naming the sidecar's own site at generation
// 2^63-1, one unsigned and one carrying the operator's key id over a
// signature of other fields. The real Loop must refuse both, so they change
// nothing; if it adopted one, no operator view could ever replace it, and
// the checker would see the stale primary keep writing.
func impostor(site string) []sidecar.PeerReply {
	huge := v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: site,
		Generation: math.MaxInt64, Operator: simOperator}
	tampered := apiView(site, 1)
	tampered.Generation = math.MaxInt64
	return []sidecar.PeerReply{{Peer: "impostor", Reply: sidecar.ViewReply(huge)},
		{Peer: "impostor", Reply: sidecar.ViewReply(tampered)}}
}

// apiView is a view naming site at gen as the sim's operator key signs
// it: what the impostor tampers with.
func apiView(site string, gen int64) v1alpha1.ActiveSiteView {
	return simSigs.sign(v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: site,
		Generation: gen, Operator: simOperator})
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
