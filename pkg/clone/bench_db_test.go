//go:build db

package clone_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// benchMiB is the dataset size: BLOODRAVEN_BENCH_CLONE_MIB, default 1 GiB.
func benchMiB() int {
	if v, err := strconv.Atoi(os.Getenv("BLOODRAVEN_BENCH_CLONE_MIB")); err == nil && v > 0 {
		return v
	}
	return 1024
}

// BenchmarkClone measures a clone of a dataset of benchMiB between two
// real MariaDB servers on this machine, and its anchor: the same
// mariadb-backup stream unpacked into a local folder by mbstream, with no
// HTTP, TLS, prepare, install or join. It prints, per GiB of backup:
//   - clone-seconds-per-gib: from the request to the donor's sidecar until
//     the receiver, started on the installed datadir, replicates and
//     holds the primary's checksum;
//   - clone-raw-seconds-per-gib: the anchor;
//   - clone-overhead-ratio: the first over the second (goal at most 1.25).
func BenchmarkClone(b *testing.B) {
	requireTools(b)
	bed := &cloneBed{c: testbed.StartMariaDB(b, 2, testbed.WithSkipSlaveStart(),
		testbed.WithConfig("innodb_buffer_pool_size=128M")), pki: newPKI(b)}
	primary := bed.db(b, 0)
	seedMiB(b, primary, benchMiB())
	bed.converge(b, 1)
	b.ResetTimer()
	for range b.N {
		raw, size := rawBackup(b, bed.c, 0)
		bed.serveDonor(b, 0, 0, time.Hour)
		bed.wipe(b, 1)
		start := time.Now()
		r := bed.receiver(b, 1)
		var phases []string
		lap := func(name string) {
			phases = append(phases, fmt.Sprintf("%s %.2fs", name, time.Since(start).Seconds()))
		}
		ctx := context.Background()
		for _, step := range []struct {
			name string
			run  func(context.Context) error
		}{{"fetched", r.Fetch}, {"prepared", r.Prepare}, {"installed", r.Install}} {
			if err := step.run(ctx); err != nil {
				b.Fatal(err)
			}
			lap(step.name)
		}
		pos, err := r.Position()
		if err != nil {
			b.Fatal(err)
		}
		bed.join(b, 1, pos)
		lap("joined")
		bed.replicating(b, 1)
		took := time.Since(start)
		b.Logf("clone phases (cumulative): %v, replicating %.2fs", phases, took.Seconds())
		bed.converge(b, 1) // the clone holds the primary's data (not timed: a checksum reads it all)
		_ = r.Reset()
		gib := float64(size) / (1 << 30)
		fmt.Printf("clone-dataset-size %.3f GiB\n", gib)
		fmt.Printf("clone-seconds-per-gib %.2f s\n", took.Seconds()/gib)
		fmt.Printf("clone-raw-seconds-per-gib %.2f s\n", raw.Seconds()/gib)
		fmt.Printf("clone-overhead-ratio %.2f ratio\n", took.Seconds()/raw.Seconds())
	}
}

// replicating waits until server i replicates from the primary, both
// threads running without error, and holds the primary's GTID position.
func (b *cloneBed) replicating(t testing.TB, i int) {
	t.Helper()
	var target string
	if err := b.db(t, 0).QueryRow("SELECT @@global.gtid_binlog_pos").Scan(&target); err != nil {
		t.Fatal(err)
	}
	a := b.c.Accounts
	in, err := mysql.Open(mysql.Config{Addr: b.c.Addr(i), User: a.Operator.User, Password: a.Operator.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := in.Status(ctx)
		cancel()
		if err == nil && st.Replica != nil && st.Replica.Healthy() && st.GTIDSlavePos == target {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d not replicating at %s after a minute: %+v, %v", i, target, st.Replica, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// seedMiB fills app.big with about mib MiB: rows of 1 KiB, doubled by
// INSERT ... SELECT until the size is reached.
func seedMiB(b testing.TB, db *sql.DB, mib int) {
	b.Helper()
	mustExec(b, db, "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(1024) NOT NULL, n INT NOT NULL) ENGINE=InnoDB")
	mustExec(b, db, "INSERT INTO app.t (v, n) SELECT REPEAT(MD5(seq), 32), seq FROM app.seq_1_to_1024")
	rows := 1024
	for rows*1024 < mib<<20 {
		add := min(rows, 64<<10, mib<<10-rows) // at most 64 MiB per transaction
		mustExec(b, db, fmt.Sprintf("INSERT INTO app.t (v, n) SELECT REPEAT(MD5(id+%d), 32), n FROM app.t LIMIT %d", rows, add))
		rows += add
	}
}

// rawBackup streams server i's backup into a local folder through
// mbstream, as TESTBED.md's recipe does, and returns the time and the
// size of what it unpacked.
func rawBackup(b testing.TB, c *testbed.MariaDBCluster, i int) (time.Duration, int64) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "raw")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	script := fmt.Sprintf("set -o pipefail; mariadb-backup --defaults-file=%s --backup --stream=xbstream --target-dir=%s "+
		"--socket=%s --user=root | mbstream -x -C %s", c.ConfigFile(i), b.TempDir(), c.Socket(i), dir)
	start := time.Now()
	if out, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil {
		b.Fatalf("raw backup: %v\n%s", err, tail(out))
	}
	took := time.Since(start)
	return took, dirSize(b, dir)
}

func tail(b []byte) []byte {
	if len(b) > 2048 {
		return b[len(b)-2048:]
	}
	return b
}
