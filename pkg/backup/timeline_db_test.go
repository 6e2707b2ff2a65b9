//go:build db

package backup_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/backup"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

func scanString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func count(t *testing.T, db *sql.DB, note string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM shop.orders WHERE note = ?", note).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPITRNeverReplaysLostWrites: iad writes rows pdx never receives, in
// two seconds, then pdx is promoted holding less (an emergency failover)
// and the promotion is put in the group's timeline. While only iad's file
// reaches past the promotion, a restore to a time inside iad's lost
// writes is refused: replaying them would bring back what the group lost.
// Once pdx's binlog (begun at its promotion) is archived, a restore past
// pdx's writes takes iad's file only up to the promotion and carries on
// with pdx's: none of iad's lost rows, every pdx row up to the target.
func TestPITRNeverReplaysLostWrites(t *testing.T) {
	requireTools(t)
	c := testbed.StartMariaDB(t, 3)
	b := newBedOn(t, c)
	iad, pdx := b.root(t, 0), b.root(t, 1)
	ctx := context.Background()
	seed(t, iad, 100)
	m, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		insert(t, iad, "shared")
	}
	caughtUp(t, pdx, iad)
	exec1(t, pdx, "STOP SLAVE")
	insert(t, iad, "lost")
	time.Sleep(1100 * time.Millisecond)
	insert(t, iad, "lost")
	lostAt := time.Now().UTC().Truncate(time.Second)
	time.Sleep(1100 * time.Millisecond)
	exec1(t, iad, "SET GLOBAL read_only = ON")
	exec1(t, iad, "FLUSH BINARY LOGS")
	if _, err := b.archiver(t).ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}

	// The promotion: pdx begins a binlog of its own and drops the ones
	// it wrote as a replica (they would let a replay go around iad's).
	exec1(t, pdx, "RESET SLAVE ALL")
	exec1(t, pdx, "FLUSH BINARY LOGS")
	exec1(t, pdx, "PURGE BINARY LOGS TO '"+currentBinlog(t, pdx)+"'")
	var pdxServer uint32
	if err := pdx.QueryRow("SELECT @@server_id").Scan(&pdxServer); err != nil {
		t.Fatal(err)
	}
	if err := backup.RecordPromotion(ctx, b.store, backup.PromotionRecord{Namespace: "shop", Group: "orders",
		Generation: 2, Time: time.Now(), To: "pdx", ToServer: pdxServer,
		Position: scanString(t, pdx, "SELECT @@gtid_binlog_pos")}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", lostAt); !errors.Is(err, topology.ErrArchiveGap) {
		t.Fatalf("a target inside iad's lost writes, with only iad's file past the promotion: %v", err)
	}

	for i := 0; i < 20; i++ {
		insert(t, pdx, "pdx")
	}
	insert(t, pdx, "before the target")
	target := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	time.Sleep(time.Until(target.Add(1100 * time.Millisecond)))
	insert(t, pdx, "after the target")
	exec1(t, pdx, "FLUSH BINARY LOGS")
	pdxArch := &backup.Archiver{Store: b.store, Namespace: "shop", Group: "orders", Site: "pdx", DB: pdx, Dir: c.DataDir(1),
		Logger: quiet()}
	if _, err := pdxArch.ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	_, plan, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) < 2 || !plan.Files[0].Cut || plan.Files[0].Site != "iad" {
		t.Fatalf("the plan should take iad's file cut at the promotion, then pdx's: %+v", plan.Files)
	}
	b.wipe(t, 2)
	if _, err := backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 2)); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(2); err != nil {
		t.Fatal(err)
	}
	dst := b.root(t, 2)
	if _, err := backup.Replay(ctx, b.store, plan, m.GTIDPosition, dst,
		backup.Client{Socket: c.Socket(2), User: "root"}, "", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, note := range []string{"shared", "lost", "pdx", "before the target", "after the target"} {
		got[note] = count(t, dst, note)
	}
	if got["shared"] != 50 || got["lost"] != 0 || got["pdx"] != 20 || got["before the target"] != 1 ||
		got["after the target"] != 0 {
		t.Fatalf("restored rows by note: %v", got)
	}
}

// currentBinlog is the binlog file db writes.
func currentBinlog(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SHOW MASTER STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatal("SHOW MASTER STATUS: no row")
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return string(vals[0])
}

// TestTimelineRefusesBadRecords: a timeline record that is malformed or
// sits under another generation's key fails the whole read (leaving it
// out could replay lost writes), and a bad promotion is never written.
func TestTimelineRefusesBadRecords(t *testing.T) {
	b := &bed{gw: testbed.StartObjectStore(t)}
	newBedStore(t, b)
	ctx := context.Background()
	good := backup.PromotionRecord{Namespace: "shop", Group: "orders", Generation: 2, To: "pdx", ToServer: 2,
		Position: "0-1-100"}
	if err := backup.RecordPromotion(ctx, b.store, good); err != nil {
		t.Fatal(err)
	}
	tl, err := backup.ReadTimeline(ctx, b.store, "shop", "orders")
	if err != nil || len(tl) != 1 || tl[0].ToServer != 2 || tl[0].Position.String() != "0-1-100" {
		t.Fatalf("timeline %+v, %v", tl, err)
	}
	for name, bad := range map[string]backup.PromotionRecord{
		"no server":     {Namespace: "shop", Group: "orders", Generation: 3, To: "iad", Position: "0-2-200"},
		"bad position":  {Namespace: "shop", Group: "orders", Generation: 3, To: "iad", ToServer: 1, Position: "x"},
		"no generation": {Namespace: "shop", Group: "orders", To: "iad", ToServer: 1, Position: "0-2-200"},
		"bad site":      {Namespace: "shop", Group: "orders", Generation: 3, To: "../iad", ToServer: 1},
	} {
		if err := backup.RecordPromotion(ctx, b.store, bad); !errors.Is(err, backup.ErrInvalid) {
			t.Errorf("%s: written (%v)", name, err)
		}
	}
	for name, body := range map[string]string{
		"not json":        "{",
		"another key's":   `{"namespace":"shop","group":"orders","generation":7,"to":"iad","toServer":1,"position":"0-2-200"}`,
		"another group's": `{"namespace":"shop","group":"carts","generation":3,"to":"iad","toServer":1,"position":"0-2-200"}`,
	} {
		key := "shop/orders/timeline/00000000000000000003.json"
		if _, err := b.store.Put(ctx, key, strings.NewReader(body), "application/json"); err != nil {
			t.Fatal(err)
		}
		if _, err := backup.ReadTimeline(ctx, b.store, "shop", "orders"); !errors.Is(err, backup.ErrInvalid) {
			t.Errorf("%s: read (%v)", name, err)
		}
	}
}

// TestPITRToAGTID restores to a transaction's GTID, before it and through
// it: the row it wrote is absent, then present, and the row after it is
// absent both times. A GTID the archive does not hold is refused. The
// catalog lists the backup with a window, and refuses a bad manifest.
func TestPITRToAGTID(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	ctx := context.Background()
	seed(t, src, 50)
	m, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		insert(t, src, "before")
	}
	exec1(t, src, "FLUSH BINARY LOGS")
	conn, err := src.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO shop.orders (note) VALUES ('target')"); err != nil {
		t.Fatal(err)
	}
	var last string
	if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&last); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	target, err := gtid.ParseGTID(last)
	if err != nil {
		t.Fatal(err)
	}
	insert(t, src, "after")
	exec1(t, src, "FLUSH BINARY LOGS")
	if _, err := b.archiver(t).ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Put(ctx, "shop/orders/base/zz/manifest.json", strings.NewReader("{"), "application/json"); err != nil {
		t.Fatal(err)
	}
	cat, refused, err := backup.Catalog(ctx, b.store, "shop", "orders")
	if err != nil || len(cat) != 1 || len(refused) != 1 || cat[0].Manifest.ID != "b1" || cat[0].WindowErr != nil ||
		!cat[0].Window.From.Equal(m.WindowFrom()) || cat[0].Empty() {
		t.Fatalf("catalog %+v, refused %v, %v", cat, refused, err)
	}
	missing := target
	missing.Seq += 1000
	if _, _, _, err := backup.PlanRestoreToGTID(ctx, b.store, "shop", "orders", "b1", missing, true); !errors.Is(err, topology.ErrOutsideWindow) {
		t.Fatalf("a GTID not archived: %v", err)
	}
	for _, inclusive := range []bool{false, true} {
		_, plan, _, err := backup.PlanRestoreToGTID(ctx, b.store, "shop", "orders", "b1", target, inclusive)
		if err != nil {
			t.Fatal(err)
		}
		b.wipe(t, 1)
		if _, err := backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 1)); err != nil {
			t.Fatal(err)
		}
		if err := b.c.Start(1); err != nil {
			t.Fatal(err)
		}
		dst := b.root(t, 1)
		pos, err := backup.Replay(ctx, b.store, plan, m.GTIDPosition, dst, backup.Client{Socket: b.c.Socket(1), User: "root"},
			"", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"before": 30, "target": 0, "after": 0}
		if inclusive {
			want["target"] = 1
		}
		for note, n := range want {
			if got := count(t, dst, note); got != n {
				t.Fatalf("%s, inclusive %v: %d rows noted %q, want %d (at %s)", target, inclusive, got, note, n, pos)
			}
		}
		_ = dst.Close()
	}
}
