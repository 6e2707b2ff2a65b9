package reclone

import "errors"

// Sentinels of the package.
var (
	// ErrInvalidConfig is an Executor missing what it needs.
	ErrInvalidConfig = errors.New("reclone: invalid configuration")
	// ErrRefused is a request the site will not carry out; the Refusal
	// says why.
	ErrRefused = errors.New("reclone: refused")
	// ErrUnsupported is a sidecar that does not serve PathReclone (an
	// older version answering 404).
	ErrUnsupported = errors.New("reclone: the sidecar has no reclone endpoint")
	// ErrWritable is a mysqld that accepts writes when its data is about
	// to be replaced.
	ErrWritable = errors.New("reclone: mysqld is writable")
	// ErrHeld is an entrypoint that gave up waiting for mysqld's hold file
	// to go (WaitHold).
	ErrHeld = errors.New("reclone: mysqld is held")
	// ErrNotHeld is a mysqld its entrypoint started without the hold
	// file's lock: a hold would not keep it stopped (HoldFile.Stop).
	ErrNotHeld = errors.New("reclone: mysqld's entrypoint does not honour the hold file")
)
