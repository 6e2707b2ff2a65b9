package authority

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrNotLeader means this replica is not the leader now: a standby
	// serves no view, and nothing is made writable (leadership.go).
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
)

// Sentinels of the authenticated transport (auth.go).
var (
	// ErrUnauthenticated means a report came without a valid client
	// certificate where one is required (401).
	ErrUnauthenticated = errors.New("report not authenticated")
	// ErrForbidden means a report's certificate names another site (403).
	ErrForbidden = errors.New("report from another identity")
)
