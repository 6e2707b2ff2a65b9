package backup

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/objstore"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Client is how Replay applies events to the restored mysqld: the mariadb
// command-line client as an account allowed to replay binlogs.
type Client struct {
	// Binary defaults to mariadb from PATH.
	Binary         string
	Socket         string
	User, Password string
}

// PlanRestore reads backup id's manifest, the archive and the group's
// timeline, and plans the replay to target (whole seconds: binlog events
// carry no finer time). A target outside the window, or an archive with a
// gap before it, is refused here, before anything is restored.
//
// Archive records that cannot be read or do not match their key are
// returned, and fail the plan (ErrArchiveRefused): without them the plan
// could miss the file that shows a continuation belongs to another
// history. Repair or remove them, then plan again.
func PlanRestore(ctx context.Context, store *objstore.Store, namespace, group, id string, target time.Time) (Manifest,
	topology.PITRPlan, []RefusedRecord, error) {
	in, err := readRestoreInput(ctx, store, namespace, group, id)
	if err != nil {
		return in.m, topology.PITRPlan{}, in.refused, err
	}
	plan, err := topology.PlanPITR(in.files, in.timeline, in.base, in.m.WindowFrom(), target.Truncate(time.Second))
	if err != nil {
		return in.m, plan, in.refused, fmt.Errorf("restore %s/%s/%s to %s (%d archive records refused): %w", namespace,
			group, id, target.UTC().Format(time.RFC3339), len(in.refused), err)
	}
	return in.m, plan, in.refused, nil
}

// PlanRestoreToGTID is PlanRestore to the transaction target: the replay
// stops just before it, or just after it when inclusive.
func PlanRestoreToGTID(ctx context.Context, store *objstore.Store, namespace, group, id string, target gtid.GTID,
	inclusive bool) (Manifest, topology.PITRPlan, []RefusedRecord, error) {
	in, err := readRestoreInput(ctx, store, namespace, group, id)
	if err != nil {
		return in.m, topology.PITRPlan{}, in.refused, err
	}
	plan, err := topology.PlanPITRToGTID(in.files, in.timeline, in.base, target, inclusive)
	if err != nil {
		return in.m, plan, in.refused, fmt.Errorf("restore %s/%s/%s %s (%d archive records refused): %w", namespace,
			group, id, plan.Target, len(in.refused), err)
	}
	return in.m, plan, in.refused, nil
}

// restoreInput is what a restore is planned from.
type restoreInput struct {
	m        Manifest
	base     gtid.Pos
	files    []topology.ArchivedBinlog
	timeline []topology.Promotion
	refused  []RefusedRecord
}

func readRestoreInput(ctx context.Context, store *objstore.Store, namespace, group, id string) (restoreInput, error) {
	var in restoreInput
	m, err := Read(ctx, store, namespace, group, id)
	if err != nil {
		return in, err
	}
	in.m = m
	if in.base, err = gtid.ParsePos(m.GTIDPosition); err != nil {
		return in, fmt.Errorf("%w: manifest position %q: %w", ErrInvalid, m.GTIDPosition, err)
	}
	recs, refused, err := ListArchive(ctx, store, namespace, group)
	in.refused = refused
	if err != nil {
		return in, err
	}
	if len(refused) > 0 {
		keys := make([]string, len(refused))
		for i, r := range refused {
			keys[i] = r.Key
		}
		return in, fmt.Errorf("%w: %d, repair or remove them: %s (first: %w)", ErrArchiveRefused, len(refused),
			strings.Join(keys, ", "), refused[0].Err)
	}
	if in.timeline, err = ReadTimeline(ctx, store, namespace, group); err != nil {
		return in, err
	}
	in.files = planInput(recs)
	return in, nil
}

// Replay applies plan's files to the restored mysqld db, from base (the
// backup's position) to the plan's target, and returns the position
// reached. Each
// file is checked against its record before it is read. What each file
// must leave the server at is computed from the file itself, apart from
// the replay: a file before the last, its end; the file where an event at
// or after target is met, every transaction closed before that event.
// Replay stops after that file. A server short of it fails loudly
// (ErrReplayShort).
func Replay(ctx context.Context, store *objstore.Store, plan topology.PITRPlan, base string, db *sql.DB, cl Client,
	tool, tmpDir string) (gtid.Pos, error) {
	state, err := gtid.ParsePos(base)
	if err != nil {
		return nil, fmt.Errorf("%w: base position %q: %w", ErrInvalid, base, err)
	}
	target := plan.Target
	if target.GTID == nil {
		target.Time = target.Time.UTC().Truncate(time.Second)
	}
	for _, f := range plan.Files {
		path, err := fetchArchived(ctx, store, f.File, tmpDir)
		if err != nil {
			return state, err
		}
		want, hit, err := replayFile(ctx, path, f, state, target, cl, tool)
		_ = os.Remove(path)
		if err != nil {
			return state, fmt.Errorf("replay %s: %w", f.File, err)
		}
		var got string
		if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&got); err != nil {
			return state, fmt.Errorf("replay %s: %w", f.File, err)
		}
		reached, err := gtid.ParsePos(got)
		if err != nil || !reached.HasReached(want) {
			return state, fmt.Errorf("%w: after %s the server is at %q, the file should have brought it to %s",
				ErrReplayShort, f.File, got, want)
		}
		if d, ok := differsAt(reached, want); ok {
			return state, fmt.Errorf("%w: after %s the server is at %q, the file should have brought it to %s "+
				"(domain %d)", ErrReplayMismatch, f.File, got, want, d)
		}
		state = topology.MaxPos(state, want)
		if hit {
			break
		}
	}
	return state, nil
}

// replayFile computes what the file must bring the server to, then
// applies it. A file the plan cut (an old primary's, whose tail the group
// lost) is read only up to the first transaction past its kept end; the
// file holding a GTID target, up to that transaction or just past it.
func replayFile(ctx context.Context, path string, f topology.ArchivedBinlog, state gtid.Pos,
	target topology.PITRTarget, cl Client, tool string) (gtid.Pos, bool, error) {
	facts, err := scanBinlog(path)
	if err != nil {
		return nil, false, err
	}
	end, stopAt, final := facts.End, int64(0), false
	if f.Cut {
		if stopAt, err = cutOffset(path, f.End); err != nil {
			return nil, false, err
		}
		end = f.End
	}
	if target.GTID != nil && f.Holds(*target.GTID) {
		at, next, err := gtidOffsets(path, *target.GTID)
		if err != nil {
			return nil, false, err
		}
		if target.Inclusive {
			at = next // 0: the target is the file's last transaction
		}
		stopAt, final = earliest(stopAt, at), true
	}
	want, hit, err := replayExpect(path, state, target.Time, stopAt)
	if err != nil {
		return nil, false, err
	}
	if !hit && !final {
		want = topology.MaxPos(state, end)
	}
	stop := ""
	if target.GTID == nil {
		stop = target.Time.Format("2006-01-02 15:04:05")
	}
	if err := applyBinlog(ctx, tool, path, state, stop, stopAt, cl); err != nil {
		return nil, false, err
	}
	return want, hit || final, nil
}

// differsAt names a domain where reached is not exactly want: past it,
// or at its seq with another server's transaction (another history).
func differsAt(reached, want gtid.Pos) (uint32, bool) {
	for _, w := range want {
		if r, ok := reached.Domain(w.Domain); ok && (r.Seq != w.Seq || r.Server != w.Server) {
			return w.Domain, true
		}
	}
	return 0, false
}

// earliest is the lower of two offsets, 0 meaning none.
func earliest(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// fetchArchived downloads one archived file, checked against its record.
func fetchArchived(ctx context.Context, store *objstore.Store, key, dir string) (string, error) {
	rec, err := readRecord(ctx, store, key)
	if err != nil {
		return "", err
	}
	rc, err := store.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	defer func() { _ = rc.Close() }()
	path := filepath.Join(dir, "replay-"+filepath.Base(strings.ReplaceAll(key, "@", "-")))
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	_, err = io.Copy(f, &verifier{r: rc, h: sha256.New(), size: rec.Size, sha: rec.SHA256})
	err = errors.Join(err, f.Close())
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("replay %s: %w", key, err)
	}
	return path, nil
}

// applyBinlog pipes mariadb-binlog's text for one file, from state and
// stopping at the time stop (and before the event at offset stopAt, when
// set), into the client.
func applyBinlog(ctx context.Context, tool, path string, state gtid.Pos, stop string, stopAt int64, cl Client) error {
	bin := cl.Binary
	if bin == "" {
		bin = "mariadb"
	}
	args := []string{"--socket=" + cl.Socket, "--user=" + cl.User, "--batch"}
	client := exec.CommandContext(ctx, bin, args...)
	client.Env = append(os.Environ(), "MYSQL_PWD="+cl.Password)
	var cerr strings.Builder
	client.Stderr = &cerr
	stdin, err := client.StdinPipe()
	if err != nil {
		return err
	}
	if err := client.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	var targs []string
	if stop != "" {
		targs = append(targs, "--stop-datetime="+stop)
	}
	if stopAt > 0 {
		targs = append(targs, fmt.Sprintf("--stop-position=%d", stopAt))
	}
	if len(state) > 0 {
		targs = append(targs, "--start-position="+state.String())
	}
	toolErr := binlogTool(ctx, tool, path, stdin, targs...)
	closeErr := stdin.Close()
	waitErr := client.Wait()
	if waitErr != nil {
		return fmt.Errorf("%s: %w: %s", bin, waitErr, strings.TrimSpace(cerr.String()))
	}
	return errors.Join(toolErr, closeErr)
}

// readRecord reads the record stored next to an archived file.
func readRecord(ctx context.Context, store *objstore.Store, key string) (ArchivedFile, error) {
	rc, err := store.Get(ctx, key+".json")
	if err != nil {
		return ArchivedFile{}, fmt.Errorf("replay: record of %s: %w", key, err)
	}
	defer func() { _ = rc.Close() }()
	return decodeRecord(rc, key)
}
