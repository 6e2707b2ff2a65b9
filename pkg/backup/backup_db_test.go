//go:build db

package backup_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/backup"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/objstore"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// bed is a source and a target MariaDB, not replicating, and a real S3
// gateway.
type bed struct {
	c     *testbed.MariaDBCluster
	gw    *testbed.ObjectStore
	store *objstore.Store
	donor *clone.Donor
}

func requireTools(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"mariadb-backup", "mbstream", "mariadb-binlog", "mariadb"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is needed (make deps installs it): %v", bin, err)
		}
	}
}

func newBed(t *testing.T) *bed {
	t.Helper()
	requireTools(t)
	return newBedOn(t, testbed.StartMariaDB(t, 2, testbed.WithoutReplication()))
}

// newBedOn is a bed on servers already started; server 0 is the source.
func newBedOn(t *testing.T, c *testbed.MariaDBCluster) *bed {
	t.Helper()
	b := &bed{c: c, gw: testbed.StartObjectStore(t)}
	newBedStore(t, b)
	b.donor = &clone.Donor{DefaultsFile: b.c.ConfigFile(0), Socket: b.c.Socket(0), User: "root", TempDir: t.TempDir(),
		Logger: quiet()}
	return b
}

// newBedStore opens the bed's bucket on its gateway.
func newBedStore(t *testing.T, b *bed) {
	t.Helper()
	s, err := objstore.New(objstore.Config{Endpoint: b.gw.Endpoint, Bucket: "backups", Prefix: "shop", PathStyle: true,
		AccessKey: b.gw.AccessKey, SecretKey: b.gw.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.store = s
}

func (b *bed) root(t *testing.T, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", b.c.RootDSN(i))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func exec1(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func checksum(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var name string
	var sum sql.NullInt64
	if err := db.QueryRow("CHECKSUM TABLE "+table).Scan(&name, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Valid {
		t.Fatalf("no checksum for %s (missing table?)", table)
	}
	return sum.Int64
}

// wipe stops server i and empties its datadir, where a restore goes.
func (b *bed) wipe(t *testing.T, i int) {
	t.Helper()
	b.c.Stop(i)
	if err := os.RemoveAll(b.c.DataDir(i)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.c.DataDir(i), 0o750); err != nil {
		t.Fatal(err)
	}
}

func (b *bed) receiver(t *testing.T, i int) *clone.Receiver {
	return &clone.Receiver{Dir: filepath.Join(t.TempDir(), "restore"), DataDir: b.c.DataDir(i),
		DefaultsFile: b.c.ConfigFile(i), Logger: quiet()}
}

func seed(t *testing.T, db *sql.DB, rows int) {
	t.Helper()
	exec1(t, db, "CREATE DATABASE IF NOT EXISTS shop")
	exec1(t, db, "CREATE TABLE IF NOT EXISTS shop.orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200)) ENGINE=InnoDB")
	for i := 0; i < rows; i++ {
		exec1(t, db, "INSERT INTO shop.orders (note) VALUES (?)", strings.Repeat("x", i%150))
	}
}

// TestBackupRestoreChecksum takes a backup into the gateway while a writer
// commits, restores it into another server, and checks that the restored
// table's CHECKSUM TABLE equals the source's at the manifest's position:
// the rows are exactly those committed up to the recorded GTID.
func TestBackupRestoreChecksum(t *testing.T) {
	b := newBed(t)
	src := b.root(t, 0)
	seed(t, src, 500)
	var before string
	if err := src.QueryRow("SELECT @@gtid_binlog_pos").Scan(&before); err != nil {
		t.Fatal(err)
	}
	// A writer runs through the backup: each row is one GTID.
	stop := make(chan struct{})
	var wrote atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := src.Exec("INSERT INTO shop.orders (note) VALUES ('during')"); err == nil {
				wrote.Add(1)
			}
		}
	}()
	m, err := backup.Take(context.Background(), b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop",
		Group: "orders", Site: "iad"})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if m.GTIDPosition == "" || m.Size <= 0 || m.RawSize <= m.Size/10 {
		t.Fatalf("manifest %+v", m)
	}
	t.Logf("backup: raw %d bytes, stored %d, position %s, %d rows written during it", m.RawSize, m.Size,
		m.GTIDPosition, wrote.Load())
	// The source's rows up to the manifest's position: the first
	// 500 + (seqno(position) - seqno(before)) ids.
	upTo := 500 + seqno(t, m.GTIDPosition) - seqno(t, before)
	exec1(t, src, "CREATE TABLE shop.expected LIKE shop.orders")
	exec1(t, src, "INSERT INTO shop.expected SELECT * FROM shop.orders WHERE id <= ?", upTo)
	want := checksum(t, src, "shop.expected")

	b.wipe(t, 1)
	got, err := backup.Restore(context.Background(), b.store, "shop", "orders", "b1", b.receiver(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got.GTIDPosition != m.GTIDPosition {
		t.Fatalf("restored manifest %+v", got)
	}
	if err := b.c.Start(1); err != nil {
		t.Fatal(err)
	}
	dst := b.root(t, 1)
	var n int64
	if err := dst.QueryRow("SELECT COUNT(*) FROM shop.orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != upTo {
		t.Fatalf("restored %d rows, want %d (those up to %s)", n, upTo, m.GTIDPosition)
	}
	if sum := checksum(t, dst, "shop.orders"); sum != want {
		t.Fatalf("restored CHECKSUM TABLE %d, source's at the position %d", sum, want)
	}
}

// seqno is the sequence number of domain 0 in a MariaDB GTID position.
func seqno(t *testing.T, pos string) int64 {
	t.Helper()
	for _, g := range strings.Split(pos, ",") {
		p := strings.Split(g, "-")
		if len(p) == 3 && p[0] == "0" {
			n, err := strconv.ParseInt(p[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no domain 0 in %q", pos)
	return 0
}

// TestRestoreRefusesCorruptOrIncomplete: a flipped byte in the stored data,
// or a backup whose manifest never landed, is refused, and the datadir is
// left empty.
func TestRestoreRefusesCorruptOrIncomplete(t *testing.T) {
	b := newBed(t)
	seed(t, b.root(t, 0), 50)
	ctx := context.Background()
	m1, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"}); !errors.Is(err, backup.ErrInvalid) {
		t.Fatalf("a second backup under the same id: %v", err)
	}
	b.wipe(t, 1)
	if _, err := backup.Restore(ctx, b.store, "shop", "orders", "nope", b.receiver(t, 1)); !errors.Is(err, backup.ErrNoManifest) {
		t.Fatalf("restore of a missing backup: %v", err)
	}
	// Another whole backup's data under b1's manifest: valid zstd and
	// xbstream, so only the manifest's checksum can tell.
	seed(t, b.root(t, 0), 5)
	m2, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b2", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(b.gw.Dir, "backups", "shop", m1.Data)
	saved, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join(b.gw.Dir, "backups", "shop", m2.Data))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 1)); !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("restore of another backup's data under b1's manifest: %v", err)
	}
	raw := saved
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x40
	if err := os.WriteFile(data, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 1))
	if err == nil {
		t.Fatal("a corrupt backup was restored")
	}
	t.Logf("refused: %v", err)
	entries, _ := os.ReadDir(b.c.DataDir(1))
	if len(entries) != 0 {
		t.Fatalf("the datadir holds %d entries after a refused restore", len(entries))
	}
}

// failingWriter-backed source: a stream cut mid-way leaves no backup.
type cutStream struct{ d *clone.Donor }

func (c cutStream) StreamBackup(ctx context.Context, w io.Writer, infoDir string) (int64, error) {
	return c.d.StreamBackup(ctx, &cutWriter{w: w, left: 64 << 10}, infoDir)
}

type cutWriter struct {
	w    io.Writer
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) > c.left {
		return 0, fmt.Errorf("cut after the first bytes")
	}
	c.left -= len(p)
	return c.w.Write(p)
}

func TestCutStreamLeavesNoBackup(t *testing.T) {
	b := newBed(t)
	seed(t, b.root(t, 0), 50)
	ctx := context.Background()
	_, err := backup.Take(ctx, cutStream{b.donor}, b.store, backup.Request{ID: "b2", Namespace: "shop", Group: "orders", Site: "iad"})
	if err == nil {
		t.Fatal("a cut stream made a backup")
	}
	objs, lerr := b.store.List(ctx, "shop/orders/")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if len(objs) != 0 {
		t.Fatalf("a cut stream left %+v", objs)
	}
}

// heldStream fails its stream once released: an attempt still running
// when another at the same id completes.
type heldStream struct{ release chan struct{} }

func (h heldStream) StreamBackup(ctx context.Context, w io.Writer, infoDir string) (int64, error) {
	<-h.release
	return 0, fmt.Errorf("the source went away")
}

// TestFailingAttemptKeepsAnotherAttemptsData: two attempts at one id pass
// the "no manifest yet" check together; the one that completes keeps its
// data when the other fails afterwards.
func TestFailingAttemptKeepsAnotherAttemptsData(t *testing.T) {
	b := newBed(t)
	seed(t, b.root(t, 0), 20)
	ctx := context.Background()
	held := heldStream{release: make(chan struct{})}
	failed := make(chan error, 1)
	go func() {
		_, err := backup.Take(ctx, held, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
		failed <- err
	}()
	time.Sleep(500 * time.Millisecond) // the held attempt is past its check
	m, err := backup.Take(ctx, b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	close(held.release)
	if err := <-failed; err == nil {
		t.Fatal("the held attempt succeeded")
	}
	if _, err := b.store.Stat(ctx, m.Data); err != nil {
		t.Fatalf("the completed backup's data is gone after the other attempt failed: %v", err)
	}
	b.wipe(t, 1)
	if _, err := backup.Restore(ctx, b.store, "shop", "orders", "b1", b.receiver(t, 1)); err != nil {
		t.Fatal(err)
	}
}

// TestConsistentTimeIsTheToolsInUTC: mariadb-backup's end time is read as
// UTC whatever the host's time zone, and lies within the taker's clock's
// start and stop of the backup (one host here).
func TestConsistentTimeIsTheToolsInUTC(t *testing.T) {
	t.Setenv("TZ", "Asia/Tokyo")
	b := newBed(t)
	seed(t, b.root(t, 0), 10)
	m, err := backup.Take(context.Background(), b.donor, b.store, backup.Request{ID: "b1", Namespace: "shop", Group: "orders", Site: "iad"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ConsistentTime.Before(m.StartTime.Truncate(time.Second)) || m.ConsistentTime.After(m.StopTime) {
		t.Fatalf("consistent at %s, taken from %s to %s", m.ConsistentTime, m.StartTime, m.StopTime)
	}
	if !m.WindowFrom().Equal(m.ConsistentTime) {
		t.Fatalf("the window starts at %s, not at %s", m.WindowFrom(), m.ConsistentTime)
	}
}
