package reclone

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

const (
	defaultPhaseTimeout = 6 * time.Hour
	defaultStartTimeout = 2 * time.Minute
	// preservedData is the datadir's folder inside a preservation folder;
	// gtidFile holds the errant set recorded at the acceptance.
	preservedData = "datadir"
	gtidFile      = "divergent-gtid"
)

// preserve fences mysqld, stops its replication and prepares the
// preservation folder with the errant set. Done already, it does nothing.
func (e *Executor) preserve(ctx context.Context, st *state) error {
	if st.Preserved {
		return nil
	}
	if active, _, ok := e.View(); !ok || active == e.Site {
		return fmt.Errorf("%w: the view names this site active or is not held", ErrRefused)
	}
	if err := e.DB.Fence(ctx); err != nil {
		return fmt.Errorf("reclone: fence: %w", err)
	}
	if err := e.DB.StopReplication(ctx); err != nil {
		return fmt.Errorf("reclone: stop replication: %w", err)
	}
	if err := e.preservationFolder(st); err != nil {
		return err
	}
	body := fmt.Sprintf("%s\n", st.DivergentGtid)
	if err := os.WriteFile(filepath.Join(st.PreservedAt, gtidFile), []byte(body), 0o600); err != nil {
		return fmt.Errorf("reclone: record the errant set: %w", err)
	}
	st.Preserved = true
	e.log().Info("reclone: fenced, replication stopped, preservation folder ready", "at", st.PreservedAt)
	return e.save(*st)
}

// preservationFolder creates the reclone's own preservation folder, named
// once per reclone, with its ID's digest: two reclones never share one
// (also in the same second), and an existing folder is taken only by the
// reclone that named it in an earlier attempt.
func (e *Executor) preservationFolder(st *state) error {
	resumed := st.PreservedAt != ""
	if !resumed {
		kind := "replaced"
		if st.DivergentGtid != "" {
			kind = "diverged"
		}
		sum := sha256.Sum256([]byte(st.ID))
		name := fmt.Sprintf("%s-%s-%s-%s-%x", e.Group, e.Site, kind, e.now().UTC().Format("20060102T150405Z"), sum[:4])
		st.PreservedAt = filepath.Join(e.PreserveRoot, name)
		if err := e.save(*st); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(e.PreserveRoot, 0o700); err != nil {
		return fmt.Errorf("reclone: preservation root: %w", err)
	}
	err := os.Mkdir(st.PreservedAt, 0o700)
	if err != nil && (!resumed || !errors.Is(err, fs.ErrExist)) {
		return fmt.Errorf("reclone: preservation folder (never shared): %w", err)
	}
	return nil
}

// clone fetches and prepares the donor's backup while mysqld still runs,
// then stops mysqld, moves the datadir aside, installs and seeds.
func (e *Executor) clone(ctx context.Context, q Request, st *state) error {
	donor := q.Donor
	if st.Seeded {
		return nil
	}
	rcv, err := e.receiver(donor)
	if err != nil {
		return err
	}
	// A finished step does nothing; an install undone starts again here.
	if err := rcv.Fetch(ctx); err != nil {
		return fmt.Errorf("reclone: fetch from %s: %w", donor, err)
	}
	if err := rcv.Prepare(ctx); err != nil {
		return fmt.Errorf("reclone: prepare: %w", err)
	}
	if !st.Moving {
		if err := e.lastCheck(ctx); err != nil {
			return err
		}
	}
	// On every path, a resumed one included: the kubelet may have started
	// mysqld again since the last attempt, and nothing is moved, installed
	// or cleared under a running server.
	if err := e.Mysqld.Stop(ctx); err != nil {
		return fmt.Errorf("reclone: stop mysqld: %w", err)
	}
	if err := e.moveAside(ctx, st); err != nil {
		return err
	}
	if err := rcv.Install(ctx); err != nil {
		return fmt.Errorf("reclone: install: %w", err)
	}
	if st.Position, err = rcv.Position(); err != nil {
		return err
	}
	st.BinlogState = e.cloneState(q.DonorGtid, st.Position)
	if err := e.save(*st); err != nil {
		return err
	}
	if err := e.seed(ctx, st); err != nil {
		return err
	}
	return rcv.Reset()
}

func (e *Executor) receiver(donor string) (interface {
	Fetch(context.Context) error
	Prepare(context.Context) error
	Install(context.Context) error
	Position() (string, error)
	Reset() error
}, error) {
	r, err := e.Receiver(donor)
	if err != nil {
		return nil, fmt.Errorf("reclone: receiver from %s: %w", donor, err)
	}
	r.Dir, r.DataDir = e.receiveDir(), e.DataDir
	return r, nil
}

// lastCheck, right before mysqld is stopped: the view still does not name
// this site active, and mysqld is read-only.
func (e *Executor) lastCheck(ctx context.Context) error {
	if active, _, ok := e.View(); !ok || active == e.Site {
		return fmt.Errorf("%w: the view names this site active or is not held", ErrRefused)
	}
	s, err := e.DB.Status(ctx)
	if err != nil {
		return fmt.Errorf("reclone: read mysqld before stopping it: %w", err)
	}
	if !s.Fenced() {
		return fmt.Errorf("%w: before stopping it", ErrWritable)
	}
	return nil
}

// moveAside moves everything in the stopped mysqld's datadir but
// lost+found into the preservation folder. Each attempt moves into a new
// folder of its own (datadir, then datadir.1, ...), so a resumed move
// never puts a file over one preserved before. When the first rename of a
// move that began here fails, nothing moved: mysqld is started again.
func (e *Executor) moveAside(ctx context.Context, st *state) error {
	if st.Moved {
		return nil
	}
	began := !st.Moving
	if began {
		st.Moving = true
		if err := e.save(*st); err != nil {
			return err
		}
	}
	dst, err := freshFolder(filepath.Join(st.PreservedAt, preservedData))
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(e.DataDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reclone: read the datadir: %w", err)
	}
	moved := 0
	for _, en := range entries {
		if en.Name() == "lost+found" {
			continue
		}
		if err := os.Rename(filepath.Join(e.DataDir, en.Name()), filepath.Join(dst, en.Name())); err != nil {
			err = fmt.Errorf("reclone: move the datadir aside (PreserveRoot must be on the datadir's file system): %w", err)
			if began && moved == 0 {
				return e.unstop(ctx, st, err)
			}
			return err
		}
		moved++
	}
	st.Moved = true
	e.log().Info("reclone: the datadir was moved aside", "to", dst)
	return e.save(*st)
}

// freshFolder creates base, or base.1, base.2, ... the first that does
// not exist yet.
func freshFolder(base string) (string, error) {
	dst := base
	for n := 1; n <= 1000; n++ {
		err := os.Mkdir(dst, 0o700)
		if err == nil {
			return dst, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("reclone: preservation folder: %w", err)
		}
		dst = fmt.Sprintf("%s.%d", base, n)
	}
	return "", fmt.Errorf("reclone: preservation folder: no free name after %s", dst)
}

// unstop starts mysqld again (read-only, as it boots) on the datadir it
// was stopped on, which still holds all of its data, after cause.
func (e *Executor) unstop(ctx context.Context, st *state, cause error) error {
	st.Moving = false
	if err := e.save(*st); err != nil {
		return fmt.Errorf("%w; and the state: %w", cause, err)
	}
	if err := e.Mysqld.Start(ctx); err != nil {
		return fmt.Errorf("%w; and mysqld's start again: %w", cause, err)
	}
	e.log().Warn("reclone: mysqld started again on its data after a failed move", "error", cause)
	return cause
}

// seed starts mysqld on the installed clone and sets its replication
// position to the backup's, read-only.
func (e *Executor) seed(ctx context.Context, st *state) error {
	if st.Seeded {
		return nil
	}
	if err := e.Mysqld.Start(ctx); err != nil {
		return fmt.Errorf("reclone: start mysqld: %w", err)
	}
	if err := e.waitUp(ctx); err != nil {
		return err
	}
	if err := e.seedPosition(ctx, st); err != nil {
		return fmt.Errorf("reclone: seed the position %s: %w", st.Position, err)
	}
	st.Seeded = true
	e.log().Info("reclone: mysqld runs on the clone", "position", st.Position)
	return e.save(*st)
}

// waitUp waits until mysqld answers, within StartTimeout.
func (e *Executor) waitUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, orDefault(e.StartTimeout, defaultStartTimeout))
	defer cancel()
	for {
		_, err := e.DB.Status(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reclone: mysqld did not answer after its start: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// cloneState is the binlog state to seed with position: the donor's
// history of other servers kept (gtid.CloneState), or "" (position alone)
// when the donor's set is unknown, not MariaDB's, or mysqld cannot take it.
func (e *Executor) cloneState(donorGtid, position string) string {
	if _, ok := e.DB.(HistorySeeder); !ok || donorGtid == "" || position == "" {
		return ""
	}
	donor, err1 := gtid.ParseSet(donorGtid)
	pos, err2 := gtid.ParsePos(position)
	if err1 != nil || err2 != nil {
		return ""
	}
	st, err := gtid.CloneState(donor, pos)
	if err != nil {
		e.log().Warn("reclone: the clone's binlog state is its position alone", "error", err)
		return ""
	}
	return st.String()
}

func (e *Executor) seedPosition(ctx context.Context, st *state) error {
	if hs, ok := e.DB.(HistorySeeder); ok && st.BinlogState != "" {
		return hs.SeedPositionWith(ctx, st.Position, st.BinlogState)
	}
	return e.DB.SeedPosition(ctx, st.Position)
}
