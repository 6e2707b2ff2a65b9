package protocol_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// key is a deterministic key for tests: seed byte b repeated.
func key(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func signer(t testing.TB, b byte) *protocol.Signer {
	t.Helper()
	s, err := protocol.NewSigner(key(b))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ring(t testing.TB, bs ...byte) *protocol.KeyRing {
	t.Helper()
	var pubs []ed25519.PublicKey
	for _, b := range bs {
		pubs = append(pubs, key(b).Public().(ed25519.PublicKey))
	}
	r, err := protocol.NewKeyRing(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var sample = v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad", Generation: 7,
	ObservedAt: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC), Operator: "0123456789abcdef",
	Source: v1alpha1.SourceOperator}

func TestSignVerify(t *testing.T) {
	s := signer(t, 1)
	v := s.Sign(sample)
	if v.KeyID != s.KeyID() || len(v.Signature) != ed25519.SignatureSize {
		t.Fatalf("signed view has key id %q and %d signature bytes", v.KeyID, len(v.Signature))
	}
	if err := ring(t, 1).Verify(v); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := ring(t, 2, 1).Verify(v); err != nil {
		t.Fatalf("Verify with the key second of two: %v", err)
	}
}

// TestTamper changes one signed field at a time: every change must fail,
// and changing the unsigned Source or Seq must not.
func TestTamper(t *testing.T) {
	signed := signer(t, 1).Sign(sample)
	other := signer(t, 2).Sign(sample)
	cases := []struct {
		name string
		mod  func(v *v1alpha1.ActiveSiteView)
		want error
	}{
		{"namespace", func(v *v1alpha1.ActiveSiteView) { v.Namespace = "shop2" }, protocol.ErrBadSignature},
		{"group", func(v *v1alpha1.ActiveSiteView) { v.Group = "order" }, protocol.ErrBadSignature},
		{"active site", func(v *v1alpha1.ActiveSiteView) { v.ActiveSite = "pdx" }, protocol.ErrBadSignature},
		{"generation up by one", func(v *v1alpha1.ActiveSiteView) { v.Generation++ }, protocol.ErrBadSignature},
		{"generation to 2^63-1", func(v *v1alpha1.ActiveSiteView) { v.Generation = math.MaxInt64 }, protocol.ErrBadSignature},
		{"observedAt by a nanosecond", func(v *v1alpha1.ActiveSiteView) { v.ObservedAt = v.ObservedAt.Add(1) }, protocol.ErrBadSignature},
		{"operator", func(v *v1alpha1.ActiveSiteView) { v.Operator = "fedcba9876543210" }, protocol.ErrBadSignature},
		{"key id of another accepted key", func(v *v1alpha1.ActiveSiteView) { v.KeyID = other.KeyID }, protocol.ErrBadSignature},
		{"key id unknown", func(v *v1alpha1.ActiveSiteView) { v.KeyID = "0000000000000000" }, protocol.ErrUnknownKey},
		{"one signature bit", func(v *v1alpha1.ActiveSiteView) { v.Signature[5] ^= 1 }, protocol.ErrBadSignature},
		{"signature truncated", func(v *v1alpha1.ActiveSiteView) { v.Signature = v.Signature[:10] }, protocol.ErrBadSignature},
		{"signature removed", func(v *v1alpha1.ActiveSiteView) { v.Signature = nil }, protocol.ErrUnsigned},
		{"key id removed", func(v *v1alpha1.ActiveSiteView) { v.KeyID = "" }, protocol.ErrUnsigned},
		{"field boundary moved", func(v *v1alpha1.ActiveSiteView) { v.Namespace, v.Group = "shopo", "rders" }, protocol.ErrBadSignature},
		{"source is not signed", func(v *v1alpha1.ActiveSiteView) { v.Source = "peer/pdx" }, nil},
		// Seq is served alongside, unsigned, so that sidecars that verify
		// the released layout keep verifying the views of an operator that
		// stamps it (v1alpha1.ActiveSiteView.Seq says why that is safe).
		{"seq is not signed", func(v *v1alpha1.ActiveSiteView) { v.Seq = 42 }, nil},
		{"same instant in another zone", func(v *v1alpha1.ActiveSiteView) {
			v.ObservedAt = v.ObservedAt.In(time.FixedZone("x", 3600))
		}, nil},
	}
	kr := ring(t, 1, 2)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := signed
			v.Signature = bytes.Clone(signed.Signature)
			c.mod(&v)
			if err := kr.Verify(v); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	unsigned := sample
	cases := []struct {
		name string
		ring *protocol.KeyRing
		v    v1alpha1.ActiveSiteView
		want error
	}{
		{"unsigned", ring(t, 1), unsigned, protocol.ErrUnsigned},
		{"signed by a key not in the ring", ring(t, 1), signer(t, 3).Sign(sample), protocol.ErrUnknownKey},
		{"a nil ring verifies nothing", nil, signer(t, 1).Sign(sample), protocol.ErrNoKeys},
		{"a forged huge generation", ring(t, 1), func() v1alpha1.ActiveSiteView {
			v := signer(t, 1).Sign(sample)
			v.Generation = math.MaxInt64
			return v
		}(), protocol.ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.ring.Verify(c.v); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

// TestJSONRoundTrip: a view that went through JSON (a relay) still verifies.
func TestJSONRoundTrip(t *testing.T) {
	v := signer(t, 1).Sign(sample)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back v1alpha1.ActiveSiteView
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := ring(t, 1).Verify(back); err != nil {
		t.Fatalf("after JSON: %v (%s)", err, b)
	}
}

func TestKeyRing(t *testing.T) {
	pub := func(b byte) ed25519.PublicKey { return key(b).Public().(ed25519.PublicKey) }
	cases := []struct {
		name string
		pubs []ed25519.PublicKey
		ids  int
		want error
	}{
		{"one key", []ed25519.PublicKey{pub(1)}, 1, nil},
		{"two keys during a rotation", []ed25519.PublicKey{pub(1), pub(2)}, 2, nil},
		{"a duplicate counts once", []ed25519.PublicKey{pub(1), pub(1)}, 1, nil},
		{"none", nil, 0, protocol.ErrNoKeys},
		{"three", []ed25519.PublicKey{pub(1), pub(2), pub(3)}, 0, protocol.ErrTooManyKeys},
		{"a short key", []ed25519.PublicKey{pub(1)[:5]}, 0, protocol.ErrBadKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := protocol.NewKeyRing(c.pubs...)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("NewKeyRing = %v, want %v", err, c.want)
			}
			if err == nil && len(r.IDs()) != c.ids {
				t.Fatalf("IDs = %v, want %d", r.IDs(), c.ids)
			}
		})
	}
}

func TestPEM(t *testing.T) {
	priv := key(1)
	pemPriv, err := protocol.EncodePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	back, err := protocol.ParsePrivateKey(pemPriv)
	if err != nil || !back.Equal(priv) {
		t.Fatalf("ParsePrivateKey = %v", err)
	}
	pubs, err := protocol.EncodePublicKeys(key(1).Public().(ed25519.PublicKey), key(2).Public().(ed25519.PublicKey),
		key(1).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	r, err := protocol.ParseKeyRing(pubs)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IDs(); len(got) != 2 || got[0] != signer(t, 1).KeyID() || got[1] != signer(t, 2).KeyID() {
		t.Fatalf("ids %v", got)
	}
	bad := []struct {
		name string
		data []byte
		priv bool
		want error
	}{
		{"empty public", nil, false, protocol.ErrNoKeys},
		{"garbage public", []byte("hello"), false, protocol.ErrNoKeys},
		{"a private key where public keys belong", pemPriv, false, protocol.ErrBadKey},
		{"public keys where the private key belongs", pubs, true, protocol.ErrBadKey},
		{"empty private", nil, true, protocol.ErrBadKey},
		{"two private keys", append(bytes.Clone(pemPriv), pemPriv...), true, protocol.ErrBadKey},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.priv {
				_, err = protocol.ParsePrivateKey(c.data)
			} else {
				_, err = protocol.ParseKeyRing(c.data)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestPayloadIsInjective(t *testing.T) {
	a := sample
	b := sample
	a.Namespace, a.Group = "ab", "c"
	b.Namespace, b.Group = "a", "bc"
	if bytes.Equal(protocol.Payload(a), protocol.Payload(b)) {
		t.Fatal("moving a field boundary keeps the payload")
	}
}
