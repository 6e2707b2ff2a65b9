package dragonfly

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrUnknownFlavor means INFO server named neither dragonfly_version
	// nor redis_version.
	ErrUnknownFlavor = errors.New("dragonfly: server is neither Dragonfly nor Redis")
	// ErrBadInfo means an INFO field did not parse.
	ErrBadInfo = errors.New("dragonfly: bad INFO field")
	// ErrNotReplica means a takeover's target is not a replica of the source.
	ErrNotReplica = errors.New("dragonfly: takeover target is not a replica")
	// ErrNotStableSync means a Dragonfly replica has not finished its full
	// sync ("Full sync not done"): REPLTAKEOVER refuses it.
	ErrNotStableSync = errors.New("dragonfly: replica is not in stable sync")
	// ErrTakeoverFailed means the server refused or aborted the takeover;
	// the old master keeps the role.
	ErrTakeoverFailed = errors.New("dragonfly: takeover failed")
	// ErrTakeoverTimeout means the takeover did not finish within its
	// timeout; the outcome must be read back (Replication) before acting.
	ErrTakeoverTimeout = errors.New("dragonfly: takeover timed out")
	// ErrBadTimeout means a takeover timeout is not positive.
	ErrBadTimeout = errors.New("dragonfly: takeover timeout must be positive")
)
