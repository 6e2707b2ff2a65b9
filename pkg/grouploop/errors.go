package grouploop

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrUnknownSite means a site name is not in the group's spec.
	ErrUnknownSite = errors.New("unknown site")
	// ErrConflict means a status write kept conflicting with other writers.
	ErrConflict = errors.New("status write conflict")
	// ErrAuthorityMoved means a status write was abandoned: another writer
	// moved the authority (generation, active site, a failover's step) past
	// what this pass based its change on, or the write would lower the
	// generation. The pass writes nothing more and the next one re-observes.
	ErrAuthorityMoved = errors.New("the authority moved: status write abandoned")
	// ErrBadConfirmation means a confirm-authority annotation is not a
	// usable <generation>[:<site>] (authority_confirm.go).
	ErrBadConfirmation = errors.New("invalid confirm-authority value")
	// ErrRecloneUnsupported means a site's sidecar serves no reclone
	// endpoint (an older version): its reclone fails with
	// RecloneUnavailable, nothing touched.
	ErrRecloneUnsupported = errors.New("the site's sidecar cannot carry out a reclone")
	// errStaleRollout means the ordered update did not restart a site on
	// this pass: its snapshot is too old or this process does not lead.
	errStaleRollout = errors.New("the ordered update waits for a fresh snapshot and leadership")
)
