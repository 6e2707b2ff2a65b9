package mysql

import (
	"context"
	"errors"
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
	tests := []struct {
		name      string
		d         dialect
		scheduler string
		errs      map[string][]error
		after     time.Duration
		want      []string
	}{
		{"mysql: armed again", mysqlDialect{}, "ON", nil, 5500 * time.Millisecond,
			[]string{eventSchedulerQuery, leaseFenceSession, alter("5"), leaseFenceRestore}},
		{"mysql: first arm creates the event", mysqlDialect{}, "ON", map[string][]error{alter("6"): {noEvent}}, 6 * time.Second,
			slices.Concat([]string{eventSchedulerQuery, leaseFenceSession, alter("6")}, create(mysqlFence),
				[]string{alter("6"), leaseFenceRestore})},
		{"mariadb: scheduler off is turned on, schema made", mariadbDialect{}, "OFF", map[string][]error{alter("3"): {noSchema}}, 3 * time.Second,
			slices.Concat([]string{eventSchedulerQuery, eventSchedulerOn, leaseFenceSession, alter("3")}, create(mariaFence),
				[]string{alter("3"), leaseFenceRestore})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(eventSchedulerQuery, []string{"event_scheduler=" + tc.scheduler})
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
