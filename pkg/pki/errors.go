package pki

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrNoCertificate means the peer presented no certificate.
	ErrNoCertificate = errors.New("no client certificate")
	// ErrUntrusted means a certificate does not chain to the CA bundle, has
	// expired, or is not valid for the use it was presented for.
	ErrUntrusted = errors.New("certificate not trusted")
	// ErrNoIdentity means a certificate carries no Bloodraven identity, or a
	// malformed one.
	ErrNoIdentity = errors.New("certificate carries no bloodraven identity")
	// ErrWrongIdentity means a valid certificate names someone else than
	// the party expected.
	ErrWrongIdentity = errors.New("certificate names another identity")
	// ErrBadPEM means PEM data could not be decoded into what was asked for.
	ErrBadPEM = errors.New("malformed PEM")
	// ErrNotCA means a certificate meant to sign is not a CA certificate, or
	// its key does not match.
	ErrNotCA = errors.New("not a usable CA")
)
