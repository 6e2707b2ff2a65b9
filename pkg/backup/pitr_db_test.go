//go:build db

package backup_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/backup"
	"github.com/shipstream/bloodraven/pkg/topology"
)

func (b *bed) archiver(t *testing.T) *backup.Archiver {
	return &backup.Archiver{Store: b.store, Namespace: "shop", Group: "orders", Site: "iad", DB: b.root(t, 0), Dir: b.c.DataDir(0),
		Logger: quiet()}
}

// caughtUp waits until replica has applied everything source has written.
func caughtUp(t *testing.T, replica, source *sql.DB) {
	t.Helper()
	var pos string
	if err := source.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	var ok int
	if err := replica.QueryRow("SELECT MASTER_GTID_WAIT(?, 30)", pos).Scan(&ok); err != nil || ok != 0 {
		t.Fatalf("the replica did not catch up with %s: %d %v", pos, ok, err)
	}
}

// insert adds one row and returns its id.
func insert(t *testing.T, db *sql.DB, note string) int64 {
	t.Helper()
	res, err := db.Exec("INSERT INTO shop.orders (note) VALUES (?)", note)
	if err != nil {
		t.Fatal(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPITRBetweenTwoWrites restores a base backup and replays the archived
// binlogs to a time between two known writes: every row up to the first is
// there, none after it. A target past the archive is refused before
// anything is restored.
func TestPITRBetweenTwoWrites(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	ctx := context.Background()
	seed(t, src, 100)
	m, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		insert(t, src, "after the backup")
	}
	exec1(t, src, "FLUSH BINARY LOGS") // a file boundary between the writes
	a := insert(t, src, "before the target")
	target := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	time.Sleep(time.Until(target.Add(1100 * time.Millisecond)))
	after := insert(t, src, "after the target")
	for i := 0; i < 50; i++ {
		insert(t, src, "later")
	}
	exec1(t, src, "FLUSH BINARY LOGS")
	arch := b.archiver(t)
	n, err := arch.ArchiveSealed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("archived %d files, want the two sealed since the backup at least", n)
	}
	if again, err := arch.ArchiveSealed(ctx); err != nil || again != 0 {
		t.Fatalf("archiving again copied %d files (%v); want none", again, err)
	}

	if _, _, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", time.Now().Add(time.Hour)); !errors.Is(err, topology.ErrOutsideWindow) {
		t.Fatalf("a target after the archive: %v", err)
	}
	if _, _, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", m.StartTime.Add(-time.Hour)); !errors.Is(err, topology.ErrOutsideWindow) {
		t.Fatalf("a target before the backup: %v", err)
	}
	_, plan, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
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
	pos, err := backup.Replay(ctx, b.store, plan, m.GTIDPosition, dst,
		backup.Client{Socket: b.c.Socket(1), User: "root"}, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var n1, maxID int64
	if err := dst.QueryRow("SELECT COUNT(*), MAX(id) FROM shop.orders").Scan(&n1, &maxID); err != nil {
		t.Fatal(err)
	}
	if maxID != a || n1 != a {
		t.Fatalf("restored %d rows up to id %d; want exactly ids 1..%d (the write after the target is %d); at %s",
			n1, maxID, a, after, pos)
	}
	var note string
	if err := dst.QueryRow("SELECT note FROM shop.orders WHERE id = ?", a).Scan(&note); err != nil || note != "before the target" {
		t.Fatalf("row %d: %q, %v", a, note, err)
	}
}

// TestPITRAcrossAFailover: the backup is taken on iad, iad's binlogs are
// archived, then pdx (its replica) becomes the primary and writes, and its
// binlogs, which repeat what it replicated, are archived too. A restore to
// a time between two of pdx's writes has every row up to the first, from
// both primaries, and none after.
func TestPITRAcrossAFailover(t *testing.T) {
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
	for i := 0; i < 100; i++ {
		insert(t, iad, "iad after the backup")
	}
	caughtUp(t, pdx, iad)
	exec1(t, iad, "FLUSH BINARY LOGS")
	if _, err := b.archiver(t).ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	// The failover: pdx stops replicating and takes the writes.
	exec1(t, pdx, "STOP SLAVE")
	exec1(t, pdx, "RESET SLAVE ALL")
	exec1(t, iad, "SET GLOBAL read_only = ON")
	for i := 0; i < 50; i++ {
		insert(t, pdx, "pdx after the failover")
	}
	a := insert(t, pdx, "before the target")
	target := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	time.Sleep(time.Until(target.Add(1100 * time.Millisecond)))
	after := insert(t, pdx, "after the target")
	exec1(t, pdx, "FLUSH BINARY LOGS")
	pdxArch := &backup.Archiver{Store: b.store, Namespace: "shop", Group: "orders", Site: "pdx", DB: pdx, Dir: c.DataDir(1), Logger: quiet()}
	if _, err := pdxArch.ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	_, plan, _, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) == 0 || plan.Files[len(plan.Files)-1].Site != "pdx" {
		t.Fatalf("the plan does not end on pdx's binlog: %+v", plan.Files)
	}
	b.wipe(t, 2)
	if _, err := backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 2)); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(2); err != nil {
		t.Fatal(err)
	}
	dst := b.root(t, 2)
	pos, err := backup.Replay(ctx, b.store, plan, m.GTIDPosition, dst,
		backup.Client{Socket: c.Socket(2), User: "root"}, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var n, maxID int64
	if err := dst.QueryRow("SELECT COUNT(*), MAX(id) FROM shop.orders").Scan(&n, &maxID); err != nil {
		t.Fatal(err)
	}
	if maxID != a || n != a {
		t.Fatalf("restored %d rows up to id %d; want ids 1..%d (the write after the target is %d); at %s; plan %v",
			n, maxID, a, after, pos, plan.Files)
	}
}

// TestArchiveRecordFromTheBinaryFile: a statement-logged row whose literal
// reads like an event header in mariadb-binlog's text changes nothing in
// the archived record: its end is the server's position and its times
// are the real ones.
func TestArchiveRecordFromTheBinaryFile(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	ctx := context.Background()
	seed(t, src, 10)
	exec1(t, src, "FLUSH BINARY LOGS")
	conn, err := src.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, "SET SESSION binlog_format = 'STATEMENT'"); err != nil {
		t.Fatal(err)
	}
	forged := "hello\n#681231 23:59:59 server id 1  end_log_pos 1 CRC32 0x0 \tGTID 0-1-999999 trans\n"
	if _, err := conn.ExecContext(ctx, "INSERT INTO shop.orders (note) VALUES ('"+strings.ReplaceAll(forged, "\n", "\\n")+"')"); err != nil {
		t.Fatal(err)
	}
	var end string
	if err := src.QueryRow("SELECT @@gtid_binlog_pos").Scan(&end); err != nil {
		t.Fatal(err)
	}
	exec1(t, src, "FLUSH BINARY LOGS")
	before := time.Now().UTC()
	if _, err := b.archiver(t).ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	recs, _, err := backup.ListArchive(ctx, b.store, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	var last backup.ArchivedFile
	for _, r := range recs {
		if r.End == end {
			last = r
		}
	}
	if last.End != end || last.Max.After(before.Add(time.Minute)) || last.Max.Before(before.Add(-time.Hour)) ||
		last.FirstGTID != end {
		t.Fatalf("no record ends at %s with real times: %+v", end, recs)
	}
}

// TestArchiveTwoIncarnations: after RESET MASTER the site's binlog names
// and empty Gtid_list begin again; the new files are archived next to
// the old ones, not mistaken for them. A second pass reads no sealed
// file again: they are overwritten with zeros (same size and time) and
// it still succeeds.
func TestArchiveTwoIncarnations(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	ctx := context.Background()
	arch := b.archiver(t)
	seed(t, src, 10)
	exec1(t, src, "FLUSH BINARY LOGS")
	n1, err := arch.ArchiveSealed(ctx)
	if err != nil || n1 == 0 {
		t.Fatalf("first incarnation: %d, %v", n1, err)
	}
	exec1(t, src, "RESET MASTER")
	insert(t, src, "second incarnation")
	exec1(t, src, "FLUSH BINARY LOGS")
	n2, err := arch.ArchiveSealed(ctx)
	if err != nil || n2 != 1 {
		t.Fatalf("second incarnation: archived %d (%v), want its one sealed file", n2, err)
	}
	recs, _, err := backup.ListArchive(ctx, b.store, "shop", "orders")
	if err != nil || len(recs) != n1+n2 {
		t.Fatalf("%d records (%v), want %d", len(recs), err, n1+n2)
	}
	files, err := filepath.Glob(filepath.Join(b.c.DataDir(0), "mysql-bin.0*"))
	if err != nil || len(files) < 2 {
		t.Fatalf("binlogs: %v %v", files, err)
	}
	for _, f := range files[:len(files)-1] { // the sealed ones
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, make([]byte, fi.Size()), 0o660); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := arch.ArchiveSealed(ctx); err != nil || n != 0 {
		t.Fatalf("a pass over archived files: %d, %v", n, err)
	}
}

// TestArchiveRefusesBadRecords: a record that is not JSON, and a good
// record copied under another site's key, are refused and reported, and
// the restore is not planned: a plan made without them could miss the
// file that shows another history. Removed, the plan is made.
func TestArchiveRefusesBadRecords(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	ctx := context.Background()
	seed(t, src, 10)
	if _, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"}); err != nil {
		t.Fatal(err)
	}
	insert(t, src, "after the backup")
	exec1(t, src, "FLUSH BINARY LOGS")
	if _, err := b.archiver(t).ArchiveSealed(ctx); err != nil {
		t.Fatal(err)
	}
	recs, refused, err := backup.ListArchive(ctx, b.store, "shop", "orders")
	if err != nil || len(refused) != 0 || len(recs) == 0 {
		t.Fatalf("%d records, refused %v, %v", len(recs), refused, err)
	}
	last := recs[len(recs)-1]
	put := func(key string, body []byte) {
		t.Helper()
		if _, err := b.store.Put(ctx, key, bytes.NewReader(body), "application/json"); err != nil {
			t.Fatal(err)
		}
	}
	good, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	put("shop/orders/binlog/zzz/mysql-bin.000009@00.json", []byte("{not json"))
	put("shop/orders/binlog/fra/"+last.File+"@"+last.SHA256[:32]+".json", good)
	target := last.Max
	_, _, refused, err = backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
	if len(refused) != 2 || !errors.Is(err, backup.ErrArchiveRefused) {
		t.Fatalf("refused %v, %v", refused, err)
	}
	for _, key := range []string{"shop/orders/binlog/zzz/mysql-bin.000009@00.json",
		"shop/orders/binlog/fra/" + last.File + "@" + last.SHA256[:32] + ".json"} {
		if err := b.store.Remove(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	_, plan, refused, err := backup.PlanRestore(ctx, b.store, "shop", "orders", "b1", target)
	if err != nil || len(refused) != 0 || len(plan.Files) == 0 {
		t.Fatalf("plan %v, refused %v, %v", plan.Files, refused, err)
	}
}
