package controller

import "errors"

// The package's sentinel errors, for errors.Is.
var (
	// ErrNotLeading: this replica has not been elected (a standby, or a
	// process still waiting for the Lease). It is not Ready.
	ErrNotLeading = errors.New("not the elected leader")
	// ErrGroupsNotLoaded: a group the leader watches has not been read by
	// its poll loop yet. The leader is not Ready until every one has been.
	ErrGroupsNotLoaded = errors.New("groups not loaded yet")
	// ErrLoopStalled: a group's poll loop has not completed a pass for far
	// longer than a pass can take. The process is not live.
	ErrLoopStalled = errors.New("poll loop stalled")
)
