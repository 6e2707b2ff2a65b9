package topology

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrThreshold means a debounce threshold is below one.
	ErrThreshold = errors.New("topology: threshold must be at least 1")
	// ErrProbe means a probe result is not one of the Probe constants.
	ErrProbe = errors.New("topology: unknown probe result")
	// ErrNoSites means an Input lists no site.
	ErrNoSites = errors.New("topology: input has no sites")
	// ErrDuplicateSite means two SiteViews share a name.
	ErrDuplicateSite = errors.New("topology: duplicate site")
	// ErrUnknownSite means a name in the Input is not one of its sites.
	ErrUnknownSite = errors.New("topology: unknown site")
	// ErrBadState means a SiteView's State is not a v1alpha1.SiteState.
	ErrBadState = errors.New("topology: bad site state")
	// ErrNoDonor means no site may donate a clone now (CloneDonor).
	ErrNoDonor = errors.New("topology: no clone donor")
	// ErrCloneActive means the clone target is the active site, which is
	// never overwritten.
	ErrCloneActive = errors.New("topology: the active site is never cloned over")
	// ErrBackupDeferred means a backup waits: a failover owns the
	// topology (BackupSource).
	ErrBackupDeferred = errors.New("topology: backup deferred")
	// ErrRetention means a retention policy cannot be read.
	ErrRetention = errors.New("topology: invalid retention policy")
	// ErrOutsideWindow means a point-in-time target is before the base
	// backup or after the last archived event (PlanPITR).
	ErrOutsideWindow = errors.New("topology: target outside the recoverable window")
	// ErrArchiveGap means the binlog archive misses a file between the
	// base backup and the target (PlanPITR).
	ErrArchiveGap = errors.New("topology: binlog archive has a gap")
	// ErrBadRecloneRequest means a reclone-site annotation value is not
	// <site>:<prefix> or <site>:confirm=<group> (ParseRecloneRequest).
	ErrBadRecloneRequest = errors.New("topology: bad reclone request")
	// ErrArchiveAmbiguous means archived files of different sites hold
	// different transactions where a restore would replay them: one site
	// diverged, and the archive alone cannot tell which.
	ErrArchiveAmbiguous = errors.New("topology: binlog archive is ambiguous")
	// ErrBadRole means a SiteView's Role is not a v1alpha1.SiteRole.
	ErrBadRole = errors.New("topology: bad site role")
)
