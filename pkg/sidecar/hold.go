package sidecar

import (
	"context"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// MariaDB's read_only does not stop accounts that hold READ_ONLY ADMIN, and
// a fence only kills their sessions: they can reconnect and write. So while
// the fence is in force on a server that does not replicate, the sidecar
// also holds the global read lock (FLUSH TABLES WITH READ LOCK) on a
// connection of its own. It stops every account's writes and commits; they
// wait instead of committing. The hold is released as soon as the fence is
// no longer in force (the operator re-asserted or promoted this site, so
// the rule no longer fences a writable mysqld) or replication is configured
// (the operator made the site a replica, whose SQL thread the lock would
// stall). It is retaken on the next tick after anyone kills its session or
// mysqld restarts. On MySQL super_read_only already stops SUPER holders, and
// the hold adds the same guarantee.

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
	inForce := r.loop.Check(time.Now(), DBWritable).Fence
	want := inForce && r.st.db == DBReadOnly && !r.hold.replicating
	cur := r.hold.h
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
			r.log.Info("released the write hold", "inForce", inForce)
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
		r.hold.since = time.Now()
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
