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

// PlanRestore reads backup id's manifest and the archive, and plans the
// replay to target (whole seconds: binlog events carry no finer time). A
// target outside the window, or an archive with a gap before it, is
// refused here, before anything is restored.
//
// Archive records that cannot be read or do not match their key are left
// out and returned: a plan that needed one fails on the gap it leaves.
func PlanRestore(ctx context.Context, store *objstore.Store, namespace, group, id string, target time.Time) (Manifest,
	topology.PITRPlan, []RefusedRecord, error) {
	m, err := Read(ctx, store, namespace, group, id)
	if err != nil {
		return Manifest{}, topology.PITRPlan{}, nil, err
	}
	base, err := gtid.ParsePos(m.GTIDPosition)
	if err != nil {
		return m, topology.PITRPlan{}, nil, fmt.Errorf("%w: manifest position %q: %w", ErrInvalid, m.GTIDPosition, err)
	}
	recs, refused, err := ListArchive(ctx, store, namespace, group)
	if err != nil {
		return m, topology.PITRPlan{}, refused, err
	}
	timeline, err := ReadTimeline(ctx, store, namespace, group)
	if err != nil {
		return m, topology.PITRPlan{}, refused, err
	}
	files := planInput(recs)
	plan, err := topology.PlanPITR(files, timeline, base, m.WindowFrom(), target.Truncate(time.Second))
	if err != nil {
		return m, plan, refused, fmt.Errorf("restore %s/%s/%s to %s (%d archive records refused): %w", namespace, group,
			id, target.UTC().Format(time.RFC3339), len(refused), err)
	}
	return m, plan, refused, nil
}

// Replay applies plan's files to the restored mysqld db, from base (the
// backup's position) to target, and returns the position reached. Each
// file is checked against its record before it is read. What each file
// must leave the server at is computed from the file itself, apart from
// the replay: a file before the last, its end; the file where an event at
// or after target is met, every transaction closed before that event.
// Replay stops after that file. A server short of it fails loudly
// (ErrReplayShort).
func Replay(ctx context.Context, store *objstore.Store, plan topology.PITRPlan, base string, target time.Time,
	db *sql.DB, cl Client, tool, tmpDir string) (gtid.Pos, error) {
	state, err := gtid.ParsePos(base)
	if err != nil {
		return nil, fmt.Errorf("%w: base position %q: %w", ErrInvalid, base, err)
	}
	target = target.UTC().Truncate(time.Second)
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
		state = topology.MaxPos(state, want)
		if hit {
			break
		}
	}
	return state, nil
}

// replayFile computes what the file must bring the server to, then
// applies it. A file the plan cut (an old primary's, whose tail the group
// lost) is read only up to the first transaction past its kept end.
func replayFile(ctx context.Context, path string, f topology.ArchivedBinlog, state gtid.Pos, target time.Time,
	cl Client, tool string) (gtid.Pos, bool, error) {
	facts, err := scanBinlog(path)
	if err != nil {
		return nil, false, err
	}
	end, stopAt := facts.End, int64(0)
	if f.Cut {
		if stopAt, err = cutOffset(path, f.End); err != nil {
			return nil, false, err
		}
		end = f.End
	}
	want, hit, err := replayExpect(path, state, target, stopAt)
	if err != nil {
		return nil, false, err
	}
	if !hit {
		want = topology.MaxPos(state, end)
	}
	if err := applyBinlog(ctx, tool, path, state, target.Format("2006-01-02 15:04:05"), stopAt, cl); err != nil {
		return nil, false, err
	}
	return want, hit, nil
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
	targs := []string{"--stop-datetime=" + stop}
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
