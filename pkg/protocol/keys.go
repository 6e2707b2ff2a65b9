package protocol

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"slices"
)

// PEM block types of the stored keys.
const (
	pemPublic  = "PUBLIC KEY"
	pemPrivate = "PRIVATE KEY"
)

// MaxKeys is how many public keys a ring accepts: the current one and, during
// a rotation, one other.
const MaxKeys = 2

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// GenerateKey makes a new signing key from rand (crypto/rand.Reader in production).
func GenerateKey(rand io.Reader) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("generate view key: %w", err)
	}
	return priv, nil
}

// EncodePrivateKey is priv as a PKCS #8 PEM block.
func EncodePrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode view key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivate, Bytes: der}), nil
}

// ParsePrivateKey reads the single PKCS #8 PEM block of an Ed25519 private key.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	b, rest := pem.Decode(data)
	if b == nil || b.Type != pemPrivate {
		return nil, fmt.Errorf("private key: no %q PEM block: %w", pemPrivate, ErrBadKey)
	}
	if blk, _ := pem.Decode(rest); blk != nil {
		return nil, fmt.Errorf("private key: more than one PEM block: %w", ErrBadKey)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private key: %w: %w", ErrBadKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("private key is a %T: %w", k, ErrBadKey)
	}
	return priv, nil
}

// EncodePublicKeys is the keys as PKIX PEM blocks, in order, without duplicates.
func EncodePublicKeys(pubs ...ed25519.PublicKey) ([]byte, error) {
	var out []byte
	var seen []string
	for _, p := range pubs {
		if id := KeyID(p); !slices.Contains(seen, id) {
			seen = append(seen, id)
			der, err := x509.MarshalPKIXPublicKey(p)
			if err != nil {
				return nil, fmt.Errorf("encode view key %s: %w", id, err)
			}
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: pemPublic, Bytes: der})...)
		}
	}
	return out, nil
}

// ParsePublicKeys reads every PEM block of data, each a PKIX Ed25519 public
// key. Anything else, or no block at all, is an error.
func ParsePublicKeys(data []byte) ([]ed25519.PublicKey, error) {
	var out []ed25519.PublicKey
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != pemPublic {
			return nil, fmt.Errorf("public keys: PEM block %q: %w", b.Type, ErrBadKey)
		}
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public keys: %w: %w", ErrBadKey, err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("public key is a %T: %w", k, ErrBadKey)
		}
		out = append(out, pub)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("public keys: no PEM block: %w", ErrNoKeys)
	}
	return out, nil
}
