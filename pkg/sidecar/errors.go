package sidecar

import "errors"

// Sentinel errors. Functions wrap them with what failed and where; test them
// with errors.Is.
var (
	// ErrInvalidSettings: Settings or Config cannot run a sidecar.
	ErrInvalidSettings = errors.New("invalid sidecar settings")
	// ErrUnreachable: the operator or a peer did not answer in time (refused,
	// reset, blackholed, or an unexpected HTTP status).
	ErrUnreachable = errors.New("unreachable")
	// ErrPeerTooOld: a peer answered 404, so it runs a sidecar that predates
	// /peer/active-site. It is skipped without counting as an error.
	ErrPeerTooOld = errors.New("peer does not serve /peer/active-site")
	// ErrNoView: a peer answered 503, it holds no view yet.
	ErrNoView = errors.New("no view yet")
	// ErrMalformed: an answer that is not a usable view (bad JSON, missing
	// group, active site or generation).
	ErrMalformed = errors.New("malformed view")
	// ErrForeignView: a well-formed view of another group or namespace.
	ErrForeignView = errors.New("view of another group")
	// ErrOlderView: a view whose generation is below the one this sidecar
	// holds, or below the floor an earlier process of it had seen (a replay).
	ErrOlderView = errors.New("view older than the one held")
	// ErrStillWritable: mysqld still accepts writes after a fence.
	ErrStillWritable = errors.New("still writable after fence")
	// ErrStillRunning: mysqld did not stop when the fence escalated.
	ErrStillRunning = errors.New("mysqld still running")
	// ErrNoProcess: the pid file names no running mysqld.
	ErrNoProcess = errors.New("no mysqld process")
)

// Sentinels of the in-place upgrade (upgrade.go, handover.go).
var (
	// ErrBadHandover: the state handed over by the process that re-executed
	// this one is unusable (too old, another site, a view that does not
	// verify); the process starts as a fresh boot instead.
	ErrBadHandover = errors.New("handover refused")
	// ErrWriteHeld: the sidecar holds the global read lock on its fenced
	// mysqld; a re-exec would drop it, so it is refused.
	ErrWriteHeld = errors.New("write hold held")
	// ErrHashMismatch: an upgrade's body does not hash to the expected SHA-256.
	ErrHashMismatch = errors.New("executable hash mismatch")
	// ErrTerminating: the Pod's termination began; a re-exec would cut it.
	ErrTerminating = errors.New("terminating")
	// ErrFenceFailing: a run of fences keeps failing; its escalation budget
	// lives in this process only, so a re-exec is refused.
	ErrFenceFailing = errors.New("a fence keeps failing")
)
