package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"
)

// holdStatement takes the global read lock. Unlike read_only, it stops every
// session's writes and commits, READ_ONLY ADMIN and SUPER holders included,
// and the replication SQL thread too. It waits for running writes, so the
// session's lock_wait_timeout bounds it.
const holdStatement = "FLUSH TABLES WITH READ LOCK"

// WriteHold is the global read lock, held on a connection of its own until
// Release. Killing that connection, or a restart of the server, ends it.
type WriteHold interface {
	// Alive reports whether the connection, and so the lock, still holds.
	Alive(ctx context.Context) error
	// Release unlocks and closes the connection; it is never reused.
	Release()
}

type writeHold struct{ conn *sql.Conn }

// HoldWrites takes the global read lock on a dedicated connection and
// keeps it. The sidecar holds it on a fenced server that does not
// replicate, so that accounts read_only exempts cannot write either.
func (in *instance) HoldWrites(ctx context.Context) (WriteHold, error) {
	c, err := in.db.Conn(ctx)
	if err != nil {
		return nil, wrap("hold writes", in.addr, fmt.Errorf("connect: %w", err))
	}
	h := &writeHold{conn: c}
	if err := in.holdOn(ctx, sqlExecutor{conn: c}); err != nil {
		h.Release()
		return nil, wrap("hold writes", in.addr, err)
	}
	return h, nil
}

// holdOn sends the hold's statements, the same on both flavors: the wait
// for running writes is bounded like the fence's.
func (in *instance) holdOn(ctx context.Context, ex executor) error {
	if err := ex.exec(ctx, "SET SESSION lock_wait_timeout = ?", in.lockWaitSeconds()); err != nil {
		return err
	}
	return ex.exec(ctx, holdStatement)
}

func (h *writeHold) Alive(ctx context.Context) error {
	return h.conn.PingContext(ctx)
}

// defaultReleaseTimeout bounds UNLOCK TABLES on release.
const defaultReleaseTimeout = 2 * time.Second

// Release unlocks, then drops the physical connection rather than hand a
// locked session back to the pool.
func (h *writeHold) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), defaultReleaseTimeout)
	defer cancel()
	_, _ = h.conn.ExecContext(ctx, "UNLOCK TABLES")
	_ = h.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = h.conn.Close()
}
