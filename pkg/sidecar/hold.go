package sidecar

import (
	"context"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// MariaDB's read_only does not stop accounts that hold READ_ONLY ADMIN, and
// a fence only kills their sessions: they can reconnect and write. So while
// the server is read-only and does not replicate, the sidecar also holds
// the global read lock (FLUSH TABLES WITH READ LOCK) on a connection of its
// own, whoever made it read-only: its own fence, or the operator's SQL fence
// (a planned failover's drain, an emergency or admin fence) while this
// sidecar's view still names its site. It stops every account's writes and
// commits; they wait instead of committing. The hold is released at the
// first tick that reads the server writable (the operator re-asserted or
// promoted this site; it asks for that tick at once, see the operator's
// promote) or replicating (the operator made the site a replica, whose SQL
// thread the lock would stall). It is retaken on the next tick after anyone
// kills its session or mysqld restarts. On MySQL super_read_only already
// stops SUPER holders, and the hold adds the same guarantee.
//
// What it does not cover: a statement already waiting on the hold when the
// hold goes away (its session killed, the sidecar restarted) commits then,
// before the next tick takes the hold again, unless the server gave up on it
// first (lock_wait_timeout).

// holder is the part of pkg/mysql's Instance that takes the global read lock.
type holder interface {
	HoldWrites(ctx context.Context) (mysql.WriteHold, error)
}

// holdState is the hold; guarded by Runner.mu, changed only by the
// goroutine that fences (fenceMu held).
type holdState struct {
	h     mysql.WriteHold
	since time.Time
	// replicating: the last read saw replication configured.
	replicating bool
}

// keepHold takes, checks or releases the hold to match the fence. The caller
// holds fenceMu.
func (r *Runner) keepHold(ctx context.Context) {
	hd, ok := r.db.(holder)
	if !ok {
		return
	}
	r.mu.Lock()
	db, cur := r.st.db, r.hold.h
	// A read that failed proves nothing: a hold in place stays while this
	// sidecar's own rule fences, and goes otherwise (a primary the operator
	// made writable must not stay held while its reads time out).
	keep := cur != nil && db == DBUnknown && r.loop.Check(r.cfg.Clock.Now(), DBWritable).Fence
	want := db == DBReadOnly && !r.hold.replicating || keep
	r.mu.Unlock()
	if cur != nil {
		actx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
		err := cur.Alive(actx)
		cancel()
		if want && err == nil {
			return
		}
		cur.Release()
		r.setHold(nil)
		if want {
			r.log.Warn("write hold lost; taking it again", "error", err)
		} else {
			r.log.Info("released the write hold", "mysqld", db.String())
		}
	}
	if !want {
		return
	}
	hctx, cancel := context.WithTimeout(ctx, r.cfg.FenceTimeout)
	defer cancel()
	h, err := hd.HoldWrites(hctx)
	if err != nil {
		r.metrics.fenceErrors.Inc()
		r.log.Error("could not hold writes on the fenced mysqld", "error", err)
		return
	}
	r.setHold(h)
	r.log.Info("holding writes of every account on the fenced mysqld")
}

func (r *Runner) setHold(h mysql.WriteHold) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold.h = h
	if h != nil {
		r.hold.since = r.cfg.Clock.Now()
	} else {
		r.hold.since = time.Time{}
	}
}

// syncHold runs keepHold under fenceMu: at the end of every tick and check.
func (r *Runner) syncHold(ctx context.Context) {
	r.fenceMu.Lock()
	defer r.fenceMu.Unlock()
	r.keepHold(ctx)
}
