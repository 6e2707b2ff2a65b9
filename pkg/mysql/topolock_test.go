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
		"promote": func(ctx context.Context, in *instance) error { _, err := in.Promote(ctx); return err },
		"salvage": func(ctx context.Context, in *instance) error {
			_, err := in.SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306}, Credentials{User: "repl"},
				gtid.MustParseSet(uuidA+":1-12"))
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
			if want := []string{lockSent}; !slices.Equal(rec.sent(), want) {
				t.Fatalf("sent %v, want only %v", rec.sent(), want)
			}
		})
	}
}
