//go:build db

package clone_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// The sites of the test group.
var (
	iad = pki.SiteIdentity("shop", "orders", "iad") // the donor's sidecar
	pdx = pki.SiteIdentity("shop", "orders", "pdx") // the receiver
)

// cloneBed is a test-bed cluster whose donor serves clones through a real
// sidecar's peer handler over mutual TLS, and a receiver's client for it.
type cloneBed struct {
	c      *testbed.MariaDBCluster
	pki    pkiBed
	url    string
	client *http.Client
}

// refuseViews verifies no view: the sidecar here only serves clones.
type refuseViews struct{}

func (refuseViews) Verify(v1alpha1.ActiveSiteView) error { return errors.New("no keys in this test") }

// noMySQL is the sidecar's mysqld seam, unused by the clone endpoint.
type noMySQL struct{}

func (noMySQL) Status(context.Context) (mysql.Status, error) {
	return mysql.Status{}, errors.New("unused")
}
func (noMySQL) Fence(context.Context) error { return errors.New("unused") }

func init() {
	// The driver logs the idle connections a server's stop breaks.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func requireTools(t testing.TB) {
	t.Helper()
	requireBinary(t, "mariadb-backup")
	requireBinary(t, "mbstream")
}

// serveDonor makes server i the donor behind a sidecar's PeerHandler.
func (b *cloneBed) serveDonor(t testing.TB, i int, rate int64, timeout time.Duration) {
	t.Helper()
	donor := &clone.Donor{DefaultsFile: b.c.ConfigFile(i), Socket: b.c.Socket(i), User: "root",
		TempDir: t.TempDir(), Rate: rate, Timeout: timeout, Logger: quiet()}
	src := b.pki.source(t, iad)
	r, err := sidecar.NewRunner(sidecar.Config{
		Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
			LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: refuseViews{}},
		OperatorURL: "https://127.0.0.1:1", Logger: quiet(), TLS: src, Clone: donor}, noMySQL{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.url = serveTLS(t, src, r.PeerHandler()) + clone.PathClone
	b.client = client(b.pki.source(t, pdx), iad)
}

func newCloneBed(t testing.TB, n int) *cloneBed {
	t.Helper()
	requireTools(t)
	return &cloneBed{c: testbed.StartMariaDB(t, n, testbed.WithSkipSlaveStart()), pki: newPKI(t)}
}

func (b *cloneBed) receiver(t testing.TB, i int) *clone.Receiver {
	return &clone.Receiver{URL: b.url, Client: b.client, Dir: filepath.Join(t.TempDir(), "clone"),
		DataDir: b.c.DataDir(i), DefaultsFile: b.c.ConfigFile(i), Logger: quiet()}
}

// wipe stops server i and empties its datadir, as a lost volume would.
func (b *cloneBed) wipe(t testing.TB, i int) {
	t.Helper()
	b.c.Stop(i)
	if err := os.RemoveAll(b.c.DataDir(i)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.c.DataDir(i), 0o750); err != nil {
		t.Fatal(err)
	}
}

// join starts server i on its cloned datadir and makes it a replica of
// the primary (server 0) from pos.
func (b *cloneBed) join(t testing.TB, i int, pos string) {
	t.Helper()
	if err := b.c.Start(i); err != nil {
		t.Fatal(err)
	}
	a := b.c.Accounts
	in, err := mysql.Open(mysql.Config{Addr: b.c.Addr(i), User: a.Operator.User, Password: a.Operator.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := mysql.Endpoint{Host: testbed.Host, Port: b.c.Port(0)}
	creds := mysql.Credentials{User: a.Replication.User, Password: a.Replication.Password}
	if err := in.(mysql.Cloner).JoinAfterClone(ctx, src, creds, pos); err != nil {
		t.Fatal(err)
	}
	st, err := in.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ReadOnly {
		t.Fatal("the clone joined writable")
	}
	if st.GTIDSlavePos != pos || st.GTIDCurrentPos != pos {
		t.Fatalf("the clone's gtid_slave_pos %q, gtid_current_pos %q, want both %q", st.GTIDSlavePos, st.GTIDCurrentPos, pos)
	}
	t.Logf("joined at %s; gtid_binlog_state %q until a transaction replicates", pos, st.GTIDBinlogState)
}

func (b *cloneBed) db(t testing.TB, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", b.c.RootDSN(i))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// seed writes rows rows of about 200 bytes to app.t on the primary, in
// transactions of 1,000.
func seed(t testing.TB, db *sql.DB, rows int) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE IF NOT EXISTS app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, "+
		"v VARCHAR(255) NOT NULL, n INT NOT NULL) ENGINE=InnoDB")
	for done := 0; done < rows; {
		batch := min(1000, rows-done)
		var sb strings.Builder
		sb.WriteString("INSERT INTO app.t (v, n) VALUES ")
		for j := range batch {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(REPEAT(MD5(%d), 6), %d)", done+j, done+j)
		}
		mustExec(t, db, sb.String())
		done += batch
	}
}

func mustExec(t testing.TB, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q[:min(len(q), 80)], err)
	}
}

// purge makes server i's binlogs start after everything written so far:
// a replica asking for GTID 1 onwards would be refused.
func purge(t testing.TB, db *sql.DB) {
	t.Helper()
	mustExec(t, db, "FLUSH BINARY LOGS")
	var file string
	if err := db.QueryRow("SHOW MASTER STATUS").Scan(&file, new(any), new(any), new(any)); err != nil {
		t.Fatal(err)
	}
	// A replica's dump thread still reading an older file keeps it (MariaDB
	// skips a log in use with a warning) until it reads the rotation.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mustExec(t, db, "PURGE BINARY LOGS TO '"+file+"'")
		left := binlogs(t, db)
		if len(left) == 1 && left[0] == file {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("binlogs after purge: %v, want only %s", left, file)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// binlogs lists the server's binary log files.
func binlogs(t testing.TB, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SHOW BINARY LOGS")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var left []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name, new(any)); err != nil {
			t.Fatal(err)
		}
		left = append(left, name)
	}
	return left
}

func checksum(t testing.TB, db *sql.DB) string {
	t.Helper()
	var table, sum sql.NullString
	if err := db.QueryRow("CHECKSUM TABLE app.t").Scan(&table, &sum); err != nil {
		t.Fatal(err)
	}
	return sum.String
}

// converge waits until server i's checksum of app.t equals the primary's.
func (b *cloneBed) converge(t testing.TB, i int) string {
	t.Helper()
	primary, replica := b.db(t, 0), b.db(t, i)
	want := checksum(t, primary)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := checksum(t, replica)
		if got == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d checksum %s, primary %s after 60 s", i, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCloneFromReplicaWithPurgedBinlogs: a site whose datadir was lost is
// seeded from a caught-up replica through the donor sidecar's endpoint,
// while both the primary and the donor have purged every binlog holding the
// data. The clone's checksum equals the donor's and the primary's, it is
// read-only, and it replicates the primary's later writes.
func TestCloneFromReplicaWithPurgedBinlogs(t *testing.T) {
	b := newCloneBed(t, 3) // 0 primary; 1, 2 replicas
	primary := b.db(t, 0)
	seed(t, primary, 20_000)
	b.converge(t, 1)
	b.converge(t, 2)
	purge(t, primary)
	purge(t, b.db(t, 1))

	b.serveDonor(t, 1, 0, 5*time.Minute)
	b.wipe(t, 2)
	r := b.receiver(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pos, err := r.Seed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pos == "" {
		t.Fatal("the backup recorded no GTID position")
	}
	t.Logf("cloned at GTID position %s", pos)
	if err := r.Reset(); err != nil {
		t.Fatal(err)
	}
	b.join(t, 2, pos)
	if got, donor := b.converge(t, 2), checksum(t, b.db(t, 1)); got != donor {
		t.Fatalf("clone checksum %s, donor %s", got, donor)
	}

	seed(t, primary, 2_000) // written after the clone
	b.converge(t, 2)
	var n int
	if err := b.db(t, 2).QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n); err != nil || n != 22_000 {
		t.Fatalf("clone holds %d rows (%v), want 22000", n, err)
	}
}

// TestClonePrimaryDonorRefusalsAndResume: with the primary as the only
// donor, a clone cut by its timeout leaves nothing behind; a datadir that
// holds anything is refused and left as it was; once emptied, the same
// receiver resumes at Install and the clone replicates. The stream honours
// its rate.
func TestClonePrimaryDonorRefusalsAndResume(t *testing.T) {
	b := newCloneBed(t, 2)
	primary := b.db(t, 0)
	seed(t, primary, 5_000)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	b.serveDonor(t, 0, 1<<20, 300*time.Millisecond) // 1 MiB/s for 0.3 s: cut short
	r := b.receiver(t, 1)
	if err := r.Fetch(ctx); !errors.Is(err, clone.ErrStreamIncomplete) {
		t.Fatalf("fetch past the clone timeout: %v, want ErrStreamIncomplete", err)
	}
	if r.Done() != clone.StepNone {
		t.Fatalf("a cut stream left step %q", r.Done())
	}

	const rate = 16 << 20 // a few seconds: longer than the server's timeouts
	b.serveDonor(t, 0, rate, 5*time.Minute)
	r = b.receiver(t, 1)
	b.c.Stop(1)
	before, err := os.ReadDir(b.c.DataDir(1))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := r.Seed(ctx); !errors.Is(err, clone.ErrDataDirNotEmpty) {
		t.Fatalf("seed into a full datadir: %v, want ErrDataDirNotEmpty", err)
	}
	took := time.Since(start)
	after, err := os.ReadDir(b.c.DataDir(1))
	if err != nil || len(after) != len(before) {
		t.Fatalf("the refused datadir changed: %d entries before, %d after (%v)", len(before), len(after), err)
	}
	if r.Done() != clone.StepPrepared {
		t.Fatalf("after the refusal the receiver is at %q, want Prepared", r.Done())
	}
	size := dirSize(t, filepath.Join(r.Dir, "backup"))
	t.Logf("fetched and prepared %d bytes at %d B/s in %s", size, rate, took)
	if minimum := time.Duration(float64(size) / rate * 0.8 * float64(time.Second)); took < minimum {
		t.Fatalf("%d bytes at %d B/s took %s, below %s", size, rate, took, minimum)
	}

	b.wipe(t, 1)
	pos, err := r.Seed(ctx) // resumes at Install
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Reset()
	b.join(t, 1, pos)
	b.converge(t, 1)
	seed(t, primary, 500)
	b.converge(t, 1)
}

func dirSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
