package mysql

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The lease fence is mysqld's own copy of its sidecar's lease: an event
// that fences the server at the lease's end unless the sidecar pushes it
// later first. The sidecar enforces its lease by fencing when it runs out;
// a sidecar that is paused (stopped, starved, swapped out) while its
// mysqld runs on enforces nothing, and once the operator promotes another
// site at the lease deadline the old primary would write on. The event
// scheduler runs inside mysqld, so the fence happens while mysqld runs,
// whatever happened to the sidecar.
//
// The statements run with sql_log_bin off: the schema and the event are
// this server's own and reach no binlog, so they make no GTID and no
// replica ever sees them. The event's time is the server's own clock plus
// whole seconds, counted when the statement runs, in UTC (a daylight-saving
// change of the server's zone cannot move it).
//
// The event repeats daily and each arm moves its start. A one-time event
// would not do: once it has run, MySQL and MariaDB both remember its last
// run, and an ALTER that enables it again for a later time leaves it
// behind every other enabled event in the scheduler's queue, so it never
// fires again while the server has another event.
const (
	leaseFenceSchema = "bloodraven"
	leaseFenceEvent  = "`bloodraven`.`lease_fence`"
	// eventSchedulerQuery reads whether events run.
	eventSchedulerQuery = "SELECT @@GLOBAL.event_scheduler AS event_scheduler"
	eventSchedulerOn    = "SET GLOBAL event_scheduler = ON"
)

// leaseFenceStatements are what ArmLeaseFence sends after the
// scheduler check and the session settings: alter is tried first; create
// (schema, then event) only when the event or its schema is missing, and
// then alter again.
func leaseFenceStatements(fence string, secs int64) (alter string, create []string) {
	alter = fmt.Sprintf("ALTER EVENT %s ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL %d SECOND ENABLE",
		leaseFenceEvent, secs)
	create = []string{
		"CREATE DATABASE IF NOT EXISTS `" + leaseFenceSchema + "`",
		fmt.Sprintf("CREATE EVENT IF NOT EXISTS %s ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL 1 DAY "+
			"ON COMPLETION PRESERVE DISABLE DO %s", leaseFenceEvent, fence),
	}
	return alter, create
}

// The session settings the arm runs under, and how they are put back. The
// event's DDL waits for a global read lock (the sidecar's write hold), a
// second at most: a statement left waiting after its client gave up would
// move the event whenever the lock goes away.
const (
	leaseFenceSession = "SET SESSION sql_log_bin = 0, time_zone = '+00:00', lock_wait_timeout = 1"
	leaseFenceRestore = "SET SESSION sql_log_bin = 1, time_zone = @@GLOBAL.time_zone, lock_wait_timeout = @@GLOBAL.lock_wait_timeout"
)

// restoreTimeout bounds putting the session back, on a context of its own
// (the arm's may be over by then).
const restoreTimeout = time.Second

// ArmLeaseFence makes the server fence itself after (whole seconds, at
// least one) unless armed again before; see the comment above. It turns
// the event scheduler on when it is off, and fails with
// ErrLeaseFenceUnavailable when the server has it disabled. The sidecar
// arms it on a writable server; the operator also on a fenced one, before
// it makes it writable (MySQL's super_read_only is lowered for the arm and
// raised again: ddlBarrier). Its DDL waits a second at most for a global
// read lock (the sidecar's write hold), then fails with ErrWritesHeld.
func (in *instance) ArmLeaseFence(ctx context.Context, after time.Duration) error {
	secs := int64(after / time.Second)
	if secs < 1 {
		return wrap("arm lease fence", in.addr, fmt.Errorf("%s: %w", after, ErrLeaseFenceUnavailable))
	}
	return in.run(ctx, "arm lease fence", 0, func(ctx context.Context, ex executor, d dialect) (rerr error) {
		if err := ensureScheduler(ctx, ex); err != nil {
			return err
		}
		if err := ex.exec(ctx, leaseFenceSession); err != nil {
			return err
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
			defer cancel()
			_ = ex.exec(rctx, leaseFenceRestore)
		}()
		if b, ok := d.(ddlBarrier); ok {
			restore, err := b.liftDDLBarrier(ctx, ex)
			if err != nil {
				return err
			}
			defer restoreBarrier(ctx, ex, restore, &rerr)
		}
		return armJudged(ctx, ex, d, secs)
	})
}

// Only a global read lock (FLUSH TABLES WITH READ LOCK: the sidecar's
// write hold) holds every write back. Other locks make the event's DDL
// wait as well and leave writes free: a backup's (MariaDB's BACKUP STAGE
// BLOCK_DDL, MySQL's LOCK INSTANCE FOR BACKUP). MariaDB reports both as
// "Waiting for backup lock", so the arm asks the server instead: after
// its DDL's lock wait ran out, it sends a write that changes nothing
// (writeProbe) under the same one-second lock wait. Only when that write
// waits out its lock wait too are writes held, and the arm is
// ErrWritesHeld (a step may go on under it); otherwise the arm failed, and
// the site is not made writable.

// writeProbe is a write that changes no row: it waits for the global read
// lock as any write does. mysql.plugin exists on both flavors; the arm's
// session has sql_log_bin off.
const writeProbe = "UPDATE mysql.plugin SET dl = dl WHERE 1 = 0"

// writeProbeTimeout bounds the probe: its lock wait (a second) and a
// round trip.
const writeProbeTimeout = 1500 * time.Millisecond

// armJudged runs armEvent and judges a lock wait that ran out: the arm is
// ErrWritesHeld only if its DDL waited out its lock wait and a write that
// changes nothing then waits out its own. Both must wait: the probe's table
// alone can be locked while other writes flow.
func armJudged(ctx context.Context, ex executor, d dialect, secs int64) error {
	err := armEvent(ctx, ex, d, secs)
	if serverErrno(err) != errLockWaitTimeout {
		return err
	}
	// Its own deadline: the arm's may run out during the probe's wait, and
	// the probe's time does not count towards the event's.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeProbeTimeout)
	defer cancel()
	perr := ex.exec(pctx, writeProbe)
	if serverErrno(perr) == errLockWaitTimeout {
		return fmt.Errorf("%w: %w", ErrWritesHeld, err)
	}
	if perr != nil {
		return fmt.Errorf("the arm waited on a lock, and a write probe failed (%v): %w", perr, err)
	}
	return fmt.Errorf("the arm waited on a lock that leaves writes free (a backup's?): %w", err)
}

// armEvent moves the event, making it first when it is missing.
func armEvent(ctx context.Context, ex executor, d dialect, secs int64) error {
	alter, create := leaseFenceStatements(d.fenceStatement(), secs)
	err := ex.exec(ctx, alter)
	if n := serverErrno(err); n != errNoSuchEvent && n != errUnknownDatabase {
		return err
	}
	for _, q := range create {
		if err := ex.exec(ctx, q); err != nil {
			return fmt.Errorf("create the lease fence: %w", err)
		}
	}
	return ex.exec(ctx, alter)
}

// ddlBarrier is a dialect whose barrier refuses the event's DDL to every
// account: MySQL's super_read_only. The operator arms the lease fence on a
// fenced server, before it makes it writable (a sidecar arms it only on a
// writable one), so the arm lowers that part of the barrier for its own
// statements and raises it again after. read_only stays on meanwhile, so
// application accounts (which hold neither SUPER nor CONNECTION_ADMIN)
// cannot write. MariaDB's read_only lets the operator's account (READ_ONLY
// ADMIN) run the DDL as it is.
type ddlBarrier interface {
	// liftDDLBarrier lowers the barrier if it is up and returns the
	// statement that raises it again ("" when nothing was lowered).
	liftDDLBarrier(ctx context.Context, ex executor) (restore string, err error)
}

// restoreBarrier raises the barrier again after the arm, on a context of
// its own (the arm's may be over). A failure fails the arm: the server is
// then left read_only but without super_read_only, and is not made
// writable by a step whose arm failed.
func restoreBarrier(ctx context.Context, ex executor, restore string, rerr *error) {
	if restore == "" {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	if err := ex.exec(rctx, restore); err != nil && *rerr == nil {
		*rerr = fmt.Errorf("raise the barrier again: %w", err)
	}
}

// ensureScheduler turns the event scheduler on unless it runs already.
func ensureScheduler(ctx context.Context, ex executor) error {
	r, err := queryOne(ctx, ex, eventSchedulerQuery)
	if err != nil {
		return fmt.Errorf("read event_scheduler: %w", err)
	}
	switch v := strings.ToUpper(r.str("event_scheduler")); v {
	case "ON", "1":
		return nil
	case "DISABLED":
		return fmt.Errorf("event_scheduler is DISABLED at startup: %w", ErrLeaseFenceUnavailable)
	}
	if err := ex.exec(ctx, eventSchedulerOn); err != nil {
		return fmt.Errorf("turn the event scheduler on: %w", err)
	}
	return nil
}
