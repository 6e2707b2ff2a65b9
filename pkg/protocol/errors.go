package protocol

import "errors"

// Sentinel errors; test them with errors.Is.
var (
	// ErrUnsigned: a view without a key id or a signature.
	ErrUnsigned = errors.New("view is not signed")
	// ErrUnknownKey: a view signed with a key the ring does not accept.
	ErrUnknownKey = errors.New("view signed with an unknown key")
	// ErrBadSignature: the signature does not match the view's fields.
	ErrBadSignature = errors.New("view signature does not verify")
	// ErrNoKeys: a key ring without any key verifies nothing.
	ErrNoKeys = errors.New("no accepted view keys")
	// ErrTooManyKeys: more public keys than a rotation needs.
	ErrTooManyKeys = errors.New("too many view keys")
	// ErrBadKey: PEM or key bytes that are not an Ed25519 key.
	ErrBadKey = errors.New("not an Ed25519 key")
)
