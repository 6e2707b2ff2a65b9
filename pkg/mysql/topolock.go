package mysql

import (
	"context"
	"fmt"
	"time"
)

// The topology lock orders, on one server, the steps of two operator
// processes that would be unsafe interleaved: a salvage's start (its
// read-only check up to START REPLICA) and a promotion (its replication
// reset up to read_only off). A deposed leader may salvage into a target
// while a new leader promotes it; the statements of each are sent on one
// session holding the server's named lock, so one runs wholly before the
// other. Salvage first: the promotion's reset stops it before the target
// takes a write. Promotion first: the salvage finds the target writable
// and refuses it. Without the lock, a promotion between the salvage's
// check and its start let the old primary's tail apply on top of the new
// primary's writes (TestSalvageOrderedWithAPromotion).
//
// A named lock is the session's: the server drops it when the session
// ends, so a client that dies holding it does not hold it for long. The
// session goes back to the pool afterwards, so it is released explicitly.
const (
	topologyLockName = "bloodraven.topology"
	lockQuery        = "SELECT GET_LOCK(?, ?) AS got"
	unlockStatement  = "DO RELEASE_ALL_LOCKS()"
	unlockTimeout    = 2 * time.Second
)

// lockTopology takes the topology lock on ex's session, waiting up to
// seconds, and returns its release. A lock not got in time is
// ErrTopologyLockBusy: another operator step holds the server.
func lockTopology(ctx context.Context, ex executor, seconds int) (func(), error) {
	r, err := queryOne(ctx, ex, lockQuery, topologyLockName, seconds)
	if err != nil {
		return nil, fmt.Errorf("take the topology lock: %w", err)
	}
	if r.str("got") != "1" {
		return nil, fmt.Errorf("%w: not got within %ds", ErrTopologyLockBusy, seconds)
	}
	return func() {
		// RELEASE_ALL_LOCKS: a session that ever kept the lock (a release
		// lost with its reply) gives it up wholly, not by one count.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		_ = ex.exec(uctx, unlockStatement)
	}, nil
}
