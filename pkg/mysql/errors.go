package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"

	gomysql "github.com/go-sql-driver/mysql"
)

// Sentinel errors. Verbs wrap them with the verb and the address; test them
// with errors.Is.
var (
	// ErrUnreachable: the server could not be reached or did not answer
	// within the deadline (dial failure, reset, blackholed link).
	ErrUnreachable = errors.New("server unreachable")
	// ErrTimeout: a wait (WaitForGTID, DrainRelayLog) did not finish in time.
	ErrTimeout = errors.New("timed out")
	// ErrSalvageStopped: SalvageFrom's replication stopped without an
	// error before it reached its set; nothing more would be applied.
	ErrSalvageStopped = errors.New("salvage replication stopped")
	// ErrSalvageTargetWritable: SalvageFrom refused a server that is not
	// read-only; it was left as it was (a writable server may be the
	// primary another operator promoted).
	ErrSalvageTargetWritable = errors.New("salvage target is not read-only")
	// ErrSalvageTargetMoved: SalvageFrom refused a server that, under the
	// topology lock, no longer holds the executed set its caller read, or
	// no longer replicates from the salvage's source: it was promoted (and
	// maybe fenced again) since. It was left as it was.
	ErrSalvageTargetMoved = errors.New("salvage target changed since it was read")
	// ErrTopologyLockBusy: a promotion or a salvage did not get the
	// server's topology lock in time: another operator process's step
	// holds it (topolock.go). Nothing was changed.
	ErrTopologyLockBusy = errors.New("topology lock held by another step")
	// ErrUnfenceReplicating: Unfence refused a server whose replication
	// runs (a salvage into it, say); it was left read-only.
	ErrUnfenceReplicating = errors.New("unfence refused: the server replicates")
	// ErrNotReplica: the verb needs configured replication and there is none.
	ErrNotReplica = errors.New("not a replica")
	// ErrReplicationBroken: a replication thread stopped with an error.
	ErrReplicationBroken = errors.New("replication broken")
	// ErrDiverged: the server has transactions its source lacks (MariaDB
	// errors 1950, or 1236 "slave has diverged"). It comes wrapped together
	// with ErrReplicationBroken when replication reports it.
	ErrDiverged = errors.New("diverged from source")
	// ErrFenceNotVerified: after a fence the server still accepts writes.
	ErrFenceNotVerified = errors.New("fence not verified")
	// ErrWritableNotVerified: after Unfence or Promote the server is still read-only.
	ErrWritableNotVerified = errors.New("writable not verified")
	// ErrUnsupportedVersion: the server is older than MySQL 8.0.23 or MariaDB 10.11.
	ErrUnsupportedVersion = errors.New("unsupported server version")
	// ErrCloneUnsupported: the server's flavor has no CLONE plugin
	// (MariaDB: seed it with pkg/clone's backup stream instead).
	ErrCloneUnsupported = errors.New("clone plugin unsupported")
	// ErrInvalidConfig: Open was given an unusable Config.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrLeaseFenceUnavailable: the server cannot run the lease fence (its
	// event scheduler is disabled), or the time asked is under a second.
	ErrLeaseFenceUnavailable = errors.New("lease fence unavailable")
	// ErrSemiSyncUnavailable: the server has no semi-sync replication (MySQL
	// without its plugins), or cannot do what was asked of it (MariaDB
	// waits for one acknowledgement only).
	ErrSemiSyncUnavailable = errors.New("semi-sync unavailable")
	// ErrWritesHeld: a statement waited longer than its lock wait on a
	// global read lock (FLUSH TABLES WITH READ LOCK, the sidecar's write
	// hold), which holds every write back, its own included.
	ErrWritesHeld = errors.New("writes held by a global read lock")
)

// Server error numbers the package acts on.
const (
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	errNoSuchThread      = 1094 // ER_NO_SUCH_THREAD: already gone, for KILL
	errSourceFatal       = 1236 // ER_MASTER_FATAL_ERROR_READING_BINLOG
	errGTIDStrictOrder   = 1950 // ER_GTID_STRICT_OUT_OF_ORDER (MariaDB)
	errReadOnlyStatement = 1290 // ER_OPTION_PREVENTS_STATEMENT
	errUnknownDatabase   = 1049 // ER_BAD_DB_ERROR
	errNoSuchEvent       = 1539 // ER_EVENT_DOES_NOT_EXIST
)

// wrap gives err the verb and address, and marks transport failures with
// ErrUnreachable. It returns nil for nil.
func wrap(verb, addr string, err error) error {
	if err == nil {
		return nil
	}
	if unreachable(err) && !errors.Is(err, ErrUnreachable) {
		err = fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("%s %s: %w", verb, addr, err)
}

// unreachable tells transport failures from answers: the server never sent
// an error packet, or it did not answer before the deadline.
func unreachable(err error) bool {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// serverErrno returns the server's error number, or 0 if err is not one.
func serverErrno(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
