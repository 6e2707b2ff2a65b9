package mysql

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestEscalationStatements pins what the sidecar's last resorts send on
// both flavors: SHUTDOWN, and the write hold (FLUSH TABLES WITH READ LOCK
// with the fence's bounded lock wait). MySQL 8 cannot be installed here,
// so its statements are checked as text; MariaDB's also run in the db tier.
func TestEscalationStatements(t *testing.T) {
	ctx := context.Background()
	for _, d := range []dialect{mysqlDialect{}, mariadbDialect{}} {
		t.Run(string(d.flavor()), func(t *testing.T) {
			rec := newRecorder()
			in := recorded(Config{User: "bloodraven"}, d, rec)
			if err := in.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if err := in.holdOn(ctx, rec); err != nil {
				t.Fatal(err)
			}
			want := []string{"SHUTDOWN", "SET SESSION lock_wait_timeout = ? [1]", "FLUSH TABLES WITH READ LOCK"}
			if got := rec.sent(); !slices.Equal(got, want) {
				t.Fatalf("sent %q, want %q", got, want)
			}
		})
	}
}

// TestShutdownAfterReplicasStatements: the termination's stop waits for
// the replicas on MariaDB; MySQL has no such clause and gets SHUTDOWN.
func TestShutdownAfterReplicasStatements(t *testing.T) {
	for _, tc := range []struct {
		d    dialect
		want string
	}{{mysqlDialect{}, "SHUTDOWN"}, {mariadbDialect{}, "SHUTDOWN WAIT FOR ALL SLAVES"}} {
		t.Run(string(tc.d.flavor()), func(t *testing.T) {
			rec := newRecorder()
			in := recorded(Config{User: "bloodraven"}, tc.d, rec)
			if err := in.ShutdownAfterReplicas(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := rec.sent(); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("sent %q, want %q", got, tc.want)
			}
		})
	}
}

func TestShutdownOutcomes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"answered OK", nil, true},
		{"connection dropped while shutting down", io.ErrUnexpectedEOF, true},
		{"no SHUTDOWN privilege", &gomysql.MySQLError{Number: 1227, Message: "Access denied"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.errs[shutdownStatement] = []error{tc.err}
			err := recorded(Config{}, mariadbDialect{}, rec).Shutdown(ctx)
			if (err == nil) != tc.ok {
				t.Fatalf("error %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok && errors.Is(err, ErrUnreachable) {
				t.Fatalf("a refusal is not unreachable: %v", err)
			}
		})
	}
}
