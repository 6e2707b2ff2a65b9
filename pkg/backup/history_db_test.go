//go:build db

package backup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/backup"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestPITRRefusesABaseHoldingLostWrites: pdx stops replicating; iad
// commits ten rows pdx never gets and a base backup is taken on iad then.
// pdx is promoted and commits its own rows. A restore from that backup to
// a time after the failover would continue, by seq numbers alone, into
// pdx's file, skipping pdx's transactions at the seqs of iad's lost ones:
// it is refused, since pdx's file holds other transactions at the seq the
// base ends on.
func TestPITRRefusesABaseHoldingLostWrites(t *testing.T) {
	requireTools(t)
	c := testbed.StartMariaDB(t, 3)
	b := newBedOn(t, c)
	iad, pdx := b.root(t, 0), b.root(t, 1)
	ctx := context.Background()
	seed(t, iad, 100)
	caughtUp(t, pdx, iad)
	exec1(t, pdx, "STOP SLAVE")
	for i := 0; i < 10; i++ {
		insert(t, iad, "iad lost")
	}
	m, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	// The failover: iad fenced, pdx promoted lacking iad's ten rows.
	exec1(t, iad, "SET GLOBAL read_only = ON")
	exec1(t, pdx, "RESET SLAVE ALL")
	exec1(t, pdx, "FLUSH BINARY LOGS")
	time.Sleep(1100 * time.Millisecond) // pdx's rows after the backup's end second
	for i := 0; i < 30; i++ {
		insert(t, pdx, "pdx acknowledged")
	}
	target := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	time.Sleep(time.Until(target.Add(1100 * time.Millisecond)))
	insert(t, pdx, "after the target")
	exec1(t, pdx, "FLUSH BINARY LOGS")
	pdxArch := &backup.Archiver{Store: b.store, Namespace: "shop", Group: "orders", Site: "pdx", DB: pdx, Dir: c.DataDir(1), Logger: quiet()}
	if _, err := pdxArch.ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	_, plan, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
	if !errors.Is(err, topology.ErrArchiveAmbiguous) {
		t.Fatalf("planned from base %s into pdx's history: %v (plan %v)", m.GTIDPosition, err, plan.Files)
	}
}
