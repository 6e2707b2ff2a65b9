package mysql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestLeaseFenceStatements pins what ArmLeaseFence sends to each flavor
// (MySQL 8 cannot be installed here; MariaDB runs it in the db tier,
// TestLeaseFenceFencesTheServer).
func TestLeaseFenceStatements(t *testing.T) {
	ctx := context.Background()
	noEvent := &gomysql.MySQLError{Number: errNoSuchEvent, Message: "Unknown event 'lease_fence'"}
	noSchema := &gomysql.MySQLError{Number: errUnknownDatabase, Message: "Unknown database 'bloodraven'"}
	alter := func(secs string) string {
		return "ALTER EVENT `bloodraven`.`lease_fence` ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL " + secs + " SECOND ENABLE"
	}
	create := func(fence string) []string {
		return []string{"CREATE DATABASE IF NOT EXISTS `bloodraven`",
			"CREATE EVENT IF NOT EXISTS `bloodraven`.`lease_fence` ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL 1 DAY " +
				"ON COMPLETION PRESERVE DISABLE DO " + fence}
	}
	const mysqlFence, mariaFence = "SET GLOBAL super_read_only = ON", "SET GLOBAL read_only = ON"
	const lower = "SET GLOBAL super_read_only = OFF"
	tests := []struct {
		name      string
		d         dialect
		scheduler string
		sro       string // MySQL's @@global.super_read_only ("" on MariaDB)
		errs      map[string][]error
		after     time.Duration
		want      []string
	}{
		{"mysql: armed again on a writable server", mysqlDialect{}, "ON", "0", nil, 5500 * time.Millisecond,
			[]string{eventSchedulerQuery, leaseFenceSession, mysqlReadOnlyQuery, alter("5"), leaseFenceRestore}},
		{"mysql: first arm creates the event", mysqlDialect{}, "ON", "0", map[string][]error{alter("6"): {noEvent}}, 6 * time.Second,
			slices.Concat([]string{eventSchedulerQuery, leaseFenceSession, mysqlReadOnlyQuery, alter("6")}, create(mysqlFence),
				[]string{alter("6"), leaseFenceRestore})},
		{"mysql: the operator's arm on a fenced server lowers super_read_only for it", mysqlDialect{}, "ON", "1", nil, 12 * time.Second,
			[]string{eventSchedulerQuery, leaseFenceSession, mysqlReadOnlyQuery, lower, alter("12"), mysqlFence, leaseFenceRestore}},
		{"mysql: first arm on a fenced server", mysqlDialect{}, "ON", "1", map[string][]error{alter("9"): {noSchema}}, 9 * time.Second,
			slices.Concat([]string{eventSchedulerQuery, leaseFenceSession, mysqlReadOnlyQuery, lower, alter("9")},
				create(mysqlFence), []string{alter("9"), mysqlFence, leaseFenceRestore})},
		{"mariadb: scheduler off is turned on, schema made", mariadbDialect{}, "OFF", "", map[string][]error{alter("3"): {noSchema}}, 3 * time.Second,
			slices.Concat([]string{eventSchedulerQuery, eventSchedulerOn, leaseFenceSession, alter("3")}, create(mariaFence),
				[]string{alter("3"), leaseFenceRestore})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(eventSchedulerQuery, []string{"event_scheduler=" + tc.scheduler})
			rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=" + tc.sro})
			for q, e := range tc.errs {
				rec.errs[q] = e
			}
			if err := recorded(Config{User: "bloodraven"}, tc.d, rec).ArmLeaseFence(ctx, tc.after); err != nil {
				t.Fatalf("arm: %v", err)
			}
			if got := rec.sent(); !slices.Equal(got, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestLeaseFenceRefused: the lease fence is refused, with nothing sent
// that changes the server, when it cannot work.
func TestLeaseFenceRefused(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		scheduler string
		after     time.Duration
	}{
		"scheduler disabled at startup": {"DISABLED", 5 * time.Second},
		"under a second":                {"ON", 900 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(eventSchedulerQuery, []string{"event_scheduler=" + tc.scheduler})
			err := recorded(Config{User: "bloodraven"}, mysqlDialect{}, rec).ArmLeaseFence(ctx, tc.after)
			if !errors.Is(err, ErrLeaseFenceUnavailable) {
				t.Fatalf("err = %v, want ErrLeaseFenceUnavailable", err)
			}
			if got := rec.sent(); len(got) > 1 {
				t.Fatalf("sent %v", got)
			}
		})
	}
}

// TestLeaseFenceBarrierRestored: on MySQL, the arm raises super_read_only
// again whatever happened to the arm, and fails when it cannot: the step
// that would have made the server writable then does not.
func TestLeaseFenceBarrierRestored(t *testing.T) {
	ctx := context.Background()
	broken := &gomysql.MySQLError{Number: 2013, Message: "Lost connection"}
	const alter = "ALTER EVENT `bloodraven`.`lease_fence` ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL 8 SECOND ENABLE"
	for name, failing := range map[string]string{
		"the arm fails":                    alter,
		"super_read_only cannot be raised": "SET GLOBAL super_read_only = ON",
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(eventSchedulerQuery, []string{"event_scheduler=ON"})
			rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
			rec.errs[failing] = []error{broken}
			err := recorded(Config{User: "bloodraven"}, mysqlDialect{}, rec).ArmLeaseFence(ctx, 8*time.Second)
			if !errors.Is(err, broken) {
				t.Fatalf("err = %v, want the server's error", err)
			}
			sent := rec.sent()
			if i := slices.Index(sent, "SET GLOBAL super_read_only = ON"); i < 0 || i < slices.Index(sent, alter) {
				t.Fatalf("super_read_only not raised again after the arm: %v", sent)
			}
		})
	}
}

// TestLeaseFenceLockWait: an arm whose DDL waits out its lock wait sends a
// write that changes nothing. Only if that waits too are writes held (the
// sidecar's write hold): ErrWritesHeld, and a step may go on. A lock that
// leaves writes free (a backup's) is a failed arm. Either way the session
// and the barrier are put back.
func TestLeaseFenceLockWait(t *testing.T) {
	lockWait := &gomysql.MySQLError{Number: errLockWaitTimeout, Message: "Lock wait timeout exceeded"}
	const alter = "ALTER EVENT `bloodraven`.`lease_fence` ON SCHEDULE EVERY 1 DAY STARTS CURRENT_TIMESTAMP + INTERVAL 8 SECOND ENABLE"
	for _, writesHeld := range []bool{true, false} {
		for name, d := range map[string]dialect{"mysql": mysqlDialect{}, "mariadb": mariadbDialect{}} {
			t.Run(fmt.Sprintf("%s/writes held %v", name, writesHeld), func(t *testing.T) {
				rec := newRecorder()
				rec.answer(eventSchedulerQuery, []string{"event_scheduler=ON"})
				rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
				rec.errs[alter] = []error{lockWait}
				if writesHeld {
					rec.errs[writeProbe] = []error{lockWait}
				}
				err := recorded(Config{User: "bloodraven"}, d, rec).ArmLeaseFence(context.Background(), 8*time.Second)
				if err == nil || errors.Is(err, ErrWritesHeld) != writesHeld {
					t.Fatalf("err = %v, want ErrWritesHeld %v", err, writesHeld)
				}
				sent := rec.sent()
				if !slices.Contains(sent, writeProbe) || sent[len(sent)-1] != leaseFenceRestore {
					t.Fatalf("no write probe, or the session not put back: %v", sent)
				}
				if _, isMySQL := d.(mysqlDialect); isMySQL && !slices.Contains(sent, "SET GLOBAL super_read_only = ON") {
					t.Fatalf("super_read_only not raised again: %v", sent)
				}
			})
		}
	}
}

// TestLeaseFenceProbeTableLockedAlone: a lock on the probe's table alone
// (LOCK TABLES mysql.plugin, a backup stage that stops non-transactional
// writes) while the event's DDL goes through is no write hold: the arm
// arms, and never says ErrWritesHeld, which would let a step go on unarmed
// while writes flow.
func TestLeaseFenceProbeTableLockedAlone(t *testing.T) {
	lockWait := &gomysql.MySQLError{Number: errLockWaitTimeout, Message: "Lock wait timeout exceeded"}
	rec := newRecorder()
	rec.answer(eventSchedulerQuery, []string{"event_scheduler=ON"})
	rec.errs[writeProbe] = []error{lockWait}
	if err := recorded(Config{User: "bloodraven"}, mariadbDialect{}, rec).ArmLeaseFence(context.Background(), 8*time.Second); err != nil {
		t.Fatalf("err = %v, want the fence armed", err)
	}
}
