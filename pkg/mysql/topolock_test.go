package mysql

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// TestTopologyLockBusy: a promotion or a salvage that does not get the
// server's topology lock in time (another operator's step holds it)
// changes nothing and says so.
func TestTopologyLockBusy(t *testing.T) {
	for name, verb := range map[string]func(context.Context, *instance) error{
		"promote": func(ctx context.Context, in *instance) error { _, err := in.Promote(ctx, PromoteOptions{}); return err },
		"salvage": func(ctx context.Context, in *instance) error {
			_, err := in.SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306}, Credentials{User: "repl"},
				gtid.MustParseSet(uuidA+":1-12"), gtid.MustParseSet(uuidA+":1-10"), nil)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(lockQuery, []string{"got=0"})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := verb(ctx, recorded(Config{}, mysqlDialect{}, rec))
			if !errors.Is(err, ErrTopologyLockBusy) {
				t.Fatalf("got %v, want ErrTopologyLockBusy", err)
			}
			if want := []string{idleSent, lockSent}; !slices.Equal(rec.sent(), want) {
				t.Fatalf("sent %v, want only %v", rec.sent(), want)
			}
			if !rec.discarded {
				t.Fatal("the locking session, its idle time bounded, may go back to the pool")
			}
		})
	}
}

// TestTopologyLockReleaseFailedDiscards: a release of the topology lock
// that fails (its reply lost, or timed out) must not hand the session,
// maybe still holding the lock, back to the pool.
func TestTopologyLockReleaseFailedDiscards(t *testing.T) {
	rec := newRecorder()
	rec.errs[unlockStatement] = []error{context.DeadlineExceeded}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-5"})
	rec.answer(mysqlReadOnlyQuery, []string{"read_only=0", "super_read_only=0"})
	if _, err := recorded(Config{}, mysqlDialect{}, rec).Promote(ctx, PromoteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := rec.sent(); got[len(got)-1] != unlockStatement {
		t.Fatalf("sent %v: the release was not tried", got)
	}
	if !rec.discarded {
		t.Fatal("a session whose lock release failed goes back to the pool")
	}
}
