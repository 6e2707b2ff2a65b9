package exehash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// Len is the length of a hash in hex.
const Len = 2 * sha256.Size

// Self is the SHA-256 of the running process's binary (os.Executable).
func Self() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("exehash: locate own binary: %w", err)
	}
	return File(p)
}

// File is the SHA-256 of the file at path.
func File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("exehash: %w", err)
	}
	defer func() { _ = f.Close() }()
	return Reader(f)
}

// Reader is the SHA-256 of everything r yields.
func Reader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("exehash: read: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Valid reports whether s is a hash as this package writes it: 64
// lowercase hex digits.
func Valid(s string) bool {
	if len(s) != Len {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
