package controller

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrUnknownGroup means /active-site was asked about a group that does not exist.
	ErrUnknownGroup = errors.New("unknown failover group")
	// ErrBadRequest means an /active-site request is malformed.
	ErrBadRequest = errors.New("malformed request")
	// ErrNoActiveSite means the group exists but has no active site yet.
	ErrNoActiveSite = errors.New("group has no active site yet")
	// ErrUnknownSite means a site name is not in the group's spec.
	ErrUnknownSite = errors.New("unknown site")
	// ErrConflict means a status write kept conflicting with other writers.
	ErrConflict = errors.New("status write conflict")
	// ErrAuthorityMoved means a status write was abandoned: another writer
	// moved the authority (generation, active site, a failover's step) past
	// what this pass based its change on, or the write would lower the
	// generation. The pass writes nothing more and the next one re-observes.
	ErrAuthorityMoved = errors.New("the authority moved: status write abandoned")
	// ErrNotLeader means this process does not hold the leader-election lock now.
	ErrNotLeader = errors.New("not the leader")
)

// Sentinels of the authenticated transport (auth.go).
var (
	// ErrUnauthenticated means a report came without a valid client
	// certificate where one is required (401).
	ErrUnauthenticated = errors.New("report not authenticated")
	// ErrForbidden means a report's certificate names another site (403).
	ErrForbidden = errors.New("report from another identity")
)
