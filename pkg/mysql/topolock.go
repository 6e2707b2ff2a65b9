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
// ends. A client that stalls or is cut off holding it (a deposed leader
// paused, or partitioned away) leaves a session the server would keep
// until its wait_timeout, hours by default, or a TCP keepalive: every
// promotion of that server would find the lock busy. So the locking
// session's wait_timeout is set first to a few seconds past the longest
// the locked section is idle between its statements (the lock wait plus
// one call's read timeout, and a margin): an idle holder is disconnected,
// and its lock dropped, that soon. Such a session must never serve
// another verb, nor may one whose release failed go back to the pool
// still holding the lock: it is discarded (closed) when the verb ends.
const (
	topologyLockName  = "bloodraven.topology"
	lockQuery         = "SELECT GET_LOCK(?, ?) AS got"
	lockIdleStatement = "SET SESSION wait_timeout = ?"
	unlockStatement   = "DO RELEASE_ALL_LOCKS()"
	unlockTimeout     = 2 * time.Second
	// lockIdleMargin is added to the locking session's idle bound.
	lockIdleMargin = 2
)

// lockTopology takes the topology lock on ex's session, waiting up to
// seconds, after bounding the session's idle time to idle seconds, and
// returns its release. A lock not got in time is ErrTopologyLockBusy:
// another operator step holds the server. The session is discarded when
// its verb ends, whatever happens.
func lockTopology(ctx context.Context, ex executor, seconds, idle int) (func(), error) {
	ex.discard()
	if err := ex.exec(ctx, lockIdleStatement, idle); err != nil {
		return nil, fmt.Errorf("bound the locking session's idle time: %w", err)
	}
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
