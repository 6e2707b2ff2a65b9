package objstore

import "errors"

// Sentinels, checked with errors.Is.
var (
	// ErrInvalidConfig: the store's configuration is incomplete or wrong.
	ErrInvalidConfig = errors.New("objstore: invalid configuration")
	// ErrNotFound: no object under that key.
	ErrNotFound = errors.New("objstore: object not found")
)
