//go:build db

package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// TestSeedPositionWithKeepsTheDonorsHistory: a fresh clone seeded with
// the donor's history of other servers shows the group's executed set,
// not its position's server owning the whole domain; a repeat is
// harmless, and a state that does not end at the position is refused.
func TestSeedPositionWithKeepsTheDonorsHistory(t *testing.T) {
	s := startSites(t, 1, testbed.WithoutReplication())
	root, err := sql.Open("mysql", s.c.RootDSN(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Close() })
	if _, err := root.ExecContext(t.Context(), "RESET MASTER"); err != nil { // a clone has logged nothing
		t.Fatal(err)
	}
	in, ok := s.in[0].(interface {
		SeedPositionWith(ctx context.Context, position, state string) error
	})
	if !ok {
		t.Fatal("the Instance cannot seed a binlog state")
	}
	ctx := t.Context()
	if err := in.SeedPositionWith(ctx, "0-2-2369", "0-1-250,0-2-2400"); !errors.Is(err, mysql.ErrInvalidConfig) {
		t.Fatalf("a state past the position: %v, want ErrInvalidConfig", err)
	}
	for range 2 {
		if err := in.SeedPositionWith(ctx, "0-2-2369", "0-1-250,0-2-2369"); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.in[0].Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Executed.String(); got != "0-1:1-250,0-2:251-2369" || st.GTIDSlavePos != "0-2-2369" || !st.Fenced() {
		t.Fatalf("executed %s slave pos %s fenced %v", got, st.GTIDSlavePos, st.Fenced())
	}
}
