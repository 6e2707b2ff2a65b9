package protocol

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Signer signs views with one private key. It is safe for concurrent use.
type Signer struct {
	priv ed25519.PrivateKey
	id   string
}

// NewSigner signs with priv.
func NewSigner(priv ed25519.PrivateKey) (*Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("signing key of %d bytes: %w", len(priv), ErrBadKey)
	}
	return &Signer{priv: priv, id: KeyID(priv.Public().(ed25519.PublicKey))}, nil
}

// KeyID is the id of the signer's public key.
func (s *Signer) KeyID() string { return s.id }

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.priv.Public().(ed25519.PublicKey) }

// Sign returns v with KeyID set to the signer's and Signature over Payload.
func (s *Signer) Sign(v v1alpha1.ActiveSiteView) v1alpha1.ActiveSiteView {
	v.KeyID = s.id
	v.Signature = ed25519.Sign(s.priv, Payload(v))
	return v
}

// KeyRing is the set of public keys a sidecar accepts: one, or two during a
// rotation. It is immutable, so it is safe for concurrent use.
type KeyRing struct {
	keys map[string]ed25519.PublicKey
	ids  []string
}

// NewKeyRing accepts pubs (1 to MaxKeys, duplicates counted once).
func NewKeyRing(pubs ...ed25519.PublicKey) (*KeyRing, error) {
	k := &KeyRing{keys: map[string]ed25519.PublicKey{}}
	for _, p := range pubs {
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("public key of %d bytes: %w", len(p), ErrBadKey)
		}
		id := KeyID(p)
		if _, dup := k.keys[id]; !dup {
			k.keys[id] = slices.Clone(p)
			k.ids = append(k.ids, id)
		}
	}
	switch {
	case len(k.ids) == 0:
		return nil, ErrNoKeys
	case len(k.ids) > MaxKeys:
		return nil, fmt.Errorf("%d keys %v, at most %d: %w", len(k.ids), k.ids, MaxKeys, ErrTooManyKeys)
	}
	return k, nil
}

// ParseKeyRing reads a ring from PEM public keys (a ConfigMap's file).
func ParseKeyRing(data []byte) (*KeyRing, error) {
	pubs, err := ParsePublicKeys(data)
	if err != nil {
		return nil, err
	}
	return NewKeyRing(pubs...)
}

// IDs are the accepted key ids, in the order given.
func (k *KeyRing) IDs() []string { return slices.Clone(k.ids) }

// Verify checks v's signature: nil only when v is signed, with an accepted
// key, over exactly its fields. A nil ring verifies nothing.
func (k *KeyRing) Verify(v v1alpha1.ActiveSiteView) error {
	if k == nil || len(k.keys) == 0 {
		return ErrNoKeys
	}
	if v.KeyID == "" || len(v.Signature) == 0 {
		return ErrUnsigned
	}
	pub, ok := k.keys[v.KeyID]
	if !ok {
		return fmt.Errorf("key id %q, accepted %v: %w", v.KeyID, k.ids, ErrUnknownKey)
	}
	if !ed25519.Verify(pub, Payload(v), v.Signature) {
		return fmt.Errorf("key id %q: %w", v.KeyID, ErrBadSignature)
	}
	return nil
}
