package clone_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/shipstream/bloodraven/pkg/clone"
)

// Stand-ins for mbstream and mariadb-backup: the steps' bookkeeping is
// tested here without a server (the db tier runs the real tools).
const (
	fakeMbstream = `#!/bin/sh
# mbstream -x -C DIR: keep the stream as one file.
cat > "$3/stream.bin"
`
	fakeBackup = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --prepare) mode=prepare ;;
    --move-back) mode=move ;;
    --target-dir=*) target=${a#--target-dir=} ;;
    --datadir=*) data=${a#--datadir=} ;;
  esac
done
case "$mode" in
  prepare) printf 'mysql-bin.000002\t100\t0-1-9\n' > "$target/xtrabackup_binlog_info" ;;
  move)
    mv "$target"/* "$data"/
    if [ -e "$FAKE_FAIL_MOVE" ]; then echo "disk full" >&2; exit 1; fi ;;
esac
`
)

// TestReceiverSteps: each step is recorded and not repeated; a full
// datadir is refused and left alone; a failed install empties what it
// filled and sends the receiver back to Fetch; the steps then complete.
func TestReceiverSteps(t *testing.T) {
	bin := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	failFlag := filepath.Join(bin, "fail")
	t.Setenv("FAKE_FAIL_MOVE", failFlag)
	donor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", clone.TrailerResult)
		_, _ = io.WriteString(w, "the backup")
		w.Header().Set(clone.TrailerResult, "ok")
	}))
	defer donor.Close()
	data := t.TempDir()
	r := &clone.Receiver{URL: donor.URL, Client: donor.Client(), Dir: filepath.Join(t.TempDir(), "work"), DataDir: data,
		Backup: write("mariadb-backup", fakeBackup), Mbstream: write("mbstream", fakeMbstream),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	step := func(name string, f func(context.Context) error, want clone.Step) {
		t.Helper()
		if err := f(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := r.Done(); got != want {
			t.Fatalf("after %s: step %q, want %q", name, got, want)
		}
	}
	step("fetch", r.Fetch, clone.StepFetched)
	step("fetch again", r.Fetch, clone.StepFetched)
	step("prepare", r.Prepare, clone.StepPrepared)
	if pos, err := r.Position(); err != nil || pos != "0-1-9" {
		t.Fatalf("position %q, %v", pos, err)
	}

	precious := filepath.Join(data, "ibdata1")
	if err := os.WriteFile(precious, []byte("someone's data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Install(ctx); !errors.Is(err, clone.ErrDataDirNotEmpty) {
		t.Fatalf("install into a full datadir: %v", err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "someone's data" {
		t.Fatalf("the refused datadir changed: %q, %v", b, err)
	}
	if r.Done() != clone.StepPrepared {
		t.Fatalf("a refused install lost the prepared backup: %q", r.Done())
	}
	_ = os.Remove(precious)

	if err := os.WriteFile(failFlag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Install(ctx); !errors.Is(err, clone.ErrInstall) {
		t.Fatalf("failing install: %v", err)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 || r.Done() != clone.StepNone {
		t.Fatalf("after a failed install: datadir holds %d entries, step %q", len(left), r.Done())
	}
	_ = os.Remove(failFlag)

	pos, err := r.Seed(ctx)
	if err != nil || pos != "0-1-9" || r.Done() != clone.StepInstalled {
		t.Fatalf("seed: %q, %v, step %q", pos, err, r.Done())
	}
	step("install again", r.Install, clone.StepInstalled)
	if b, err := os.ReadFile(filepath.Join(data, "stream.bin")); err != nil || string(b) != "the backup" {
		t.Fatalf("installed %q, %v", b, err)
	}
	if err := r.Reset(); err != nil || r.Done() != clone.StepNone {
		t.Fatalf("reset: %v, step %q", err, r.Done())
	}
}

// TestReceiverInterruptedInstall: an install a restart interrupted after
// it began moving files is not trusted on resume: the datadir it was
// filling is emptied and the receiver starts again from Fetch.
func TestReceiverInterruptedInstall(t *testing.T) {
	bin := t.TempDir()
	for name, body := range map[string]string{"mariadb-backup": fakeBackup, "mbstream": fakeMbstream} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	donor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", clone.TrailerResult)
		_, _ = io.WriteString(w, "the backup")
		w.Header().Set(clone.TrailerResult, "ok")
	}))
	defer donor.Close()
	data := t.TempDir()
	r := &clone.Receiver{URL: donor.URL, Client: donor.Client(), Dir: filepath.Join(t.TempDir(), "work"), DataDir: data,
		Backup: filepath.Join(bin, "mariadb-backup"), Mbstream: filepath.Join(bin, "mbstream"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	if err := r.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	// What a process killed in the middle of --move-back leaves: its mark
	// (the file name is the receiver's own) and part of the files.
	if err := os.WriteFile(filepath.Join(r.Dir, "installing"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "half-moved.ibd"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Install(ctx); !errors.Is(err, clone.ErrInstall) {
		t.Fatalf("resumed install: %v, want ErrInstall", err)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 || r.Done() != clone.StepNone {
		t.Fatalf("after an interrupted install: datadir holds %d entries, step %q", len(left), r.Done())
	}
	if _, err := r.Seed(ctx); err != nil || r.Done() != clone.StepInstalled {
		t.Fatalf("seed after the interrupted install: %v, step %q", err, r.Done())
	}
}
