package sim

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrUnreachable means the network or a missing Pod kept a call from its site.
	ErrUnreachable = errors.New("sim: site unreachable")
	// ErrMySQLDown means the site's sidecar answered but its mysqld is down.
	ErrMySQLDown = errors.New("sim: mysqld down")
	// ErrOperatorDead means the operator's process died mid-pass
	// (restart-operator by=N): nothing it sends after that lands.
	ErrOperatorDead = errors.New("sim: operator process dead")
	// ErrUnknownSite means a site name is not part of the group.
	ErrUnknownSite = errors.New("sim: unknown site")
	// ErrSchedule means a fault schedule does not parse.
	ErrSchedule = errors.New("sim: bad schedule")
	// ErrConfig means a Config is not usable.
	ErrConfig = errors.New("sim: bad config")
)
