package sim

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// TestVerifySim: verifySim answers as the key ring does, for views it
// shortcuts (simSigner's own signatures) and for every other.
func TestVerifySim(t *testing.T) {
	other, err := protocol.NewSigner(ed25519.NewKeyFromSeed(append(make([]byte, ed25519.SeedSize-1), 1)))
	if err != nil {
		t.Fatal(err)
	}
	view := v1alpha1.ActiveSiteView{Namespace: simGroup, Group: simGroup, ActiveSite: "a", Generation: 3,
		ObservedAt: time.Unix(1700000000, 123456789), Operator: simOperator}
	signed := simSigner.Sign(view)
	altered := signed
	altered.Generation++
	badSig := signed
	badSig.Signature = append([]byte(nil), signed.Signature...)
	badSig.Signature[0] ^= 1
	foreignKey := other.Sign(view)
	foreignKeyOurID := foreignKey
	foreignKeyOurID.KeyID = simSigner.KeyID()
	unsigned := view
	unsigned.KeyID = simSigner.KeyID()
	cases := []struct {
		name  string
		view  v1alpha1.ActiveSiteView
		valid bool
	}{
		{"signed by the sim's key", signed, true},
		{"altered after signing", altered, false},
		{"signature flipped", badSig, false},
		{"another key", foreignKey, false},
		{"another key's signature under the sim's id", foreignKeyOurID, false},
		{"no signature", unsigned, false},
		{"nothing", view, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := verifySim(c.view), simKeys.Verify(c.view)
			if (got == nil) != c.valid {
				t.Fatalf("verifySim = %v, want valid=%v", got, c.valid)
			}
			if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Fatalf("verifySim = %v, the key ring says %v", got, want)
			}
		})
	}
}
