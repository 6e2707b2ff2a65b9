package controller

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrNotLeader means this replica is a standby: it serves no view.
	ErrNotLeader = errors.New("not the elected leader")
	// ErrNotPublished means this leader's poll loop has not published a view
	// of the group (it does not exist, or its first pass has not run yet).
	ErrNotPublished = errors.New("no published view of the group")
	// ErrNoSigningKey means the view-signing key is not loaded yet.
	ErrNoSigningKey = errors.New("view-signing key not loaded")
	// ErrBadRequest means an /active-site request is malformed.
	ErrBadRequest = errors.New("malformed request")
	// ErrUnknownSite means a site name is not in the group's spec.
	ErrUnknownSite = errors.New("unknown site")
	// ErrConflict means a status write kept conflicting with other writers.
	ErrConflict = errors.New("status write conflict")
)
