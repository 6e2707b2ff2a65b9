package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// FuzzVerifyJSON decodes arbitrary bytes as a view and verifies it: it must
// never panic, and no input but the genuinely signed view may verify.
func FuzzVerifyJSON(f *testing.F) {
	s := signer(f, 1)
	good, err := json.Marshal(s.Sign(sample))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"group":"orders","activeSite":"iad","generation":9223372036854775807}`))
	f.Add([]byte(`{"signature":"!!","keyID":7}`))
	kr := ring(f, 1)
	f.Fuzz(func(t *testing.T, data []byte) {
		var v v1alpha1.ActiveSiteView
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if kr.Verify(v) != nil {
			return
		}
		// Anything that verifies carries exactly the signed fields of the
		// genuine view (ed25519 signatures are not malleable).
		want := s.Sign(sample)
		if !bytes.Equal(protocol.Payload(v), protocol.Payload(want)) {
			t.Fatalf("a view other than the signed one verifies: %s", data)
		}
	})
}

// FuzzTamper signs a view built from the inputs, changes one field by the
// fuzzer's choice and checks that verification then fails.
func FuzzTamper(f *testing.F) {
	f.Add("shop", "orders", "iad", int64(3), int64(0), "op", uint8(0), "x")
	s := signer(f, 1)
	kr := ring(f, 1)
	f.Fuzz(func(t *testing.T, ns, group, site string, gen, nanos int64, operator string, field uint8, repl string) {
		v := s.Sign(v1alpha1.ActiveSiteView{Namespace: ns, Group: group, ActiveSite: site, Generation: gen,
			ObservedAt: time.Unix(0, nanos).UTC(), Operator: operator})
		if err := kr.Verify(v); err != nil {
			t.Fatalf("genuine view: %v", err)
		}
		changed := true
		switch field % 6 {
		case 0:
			changed, v.Namespace = v.Namespace != repl, repl
		case 1:
			changed, v.Group = v.Group != repl, repl
		case 2:
			changed, v.ActiveSite = v.ActiveSite != repl, repl
		case 3:
			v.Generation++
		case 4:
			v.ObservedAt = v.ObservedAt.Add(time.Duration(len(repl) + 1))
		case 5:
			changed, v.Operator = v.Operator != repl, repl
		}
		if changed && kr.Verify(v) == nil {
			t.Fatalf("tampered field %d still verifies", field%6)
		}
	})
}

// FuzzParseKeys: key decoding never panics, whatever the bytes.
func FuzzParseKeys(f *testing.F) {
	pubs, _ := protocol.EncodePublicKeys(signer(f, 1).Public(), signer(f, 2).Public())
	priv, _ := protocol.EncodePrivateKey(key(1))
	f.Add(pubs)
	f.Add(priv)
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = protocol.ParseKeyRing(data)
		_, _ = protocol.ParsePrivateKey(data)
	})
}
