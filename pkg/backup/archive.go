package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/objstore"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// ArchivedFile is the record of one archived binlog, stored next to it.
type ArchivedFile struct {
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Site      string `json:"site"`
	File      string `json:"file"`
	Start     string `json:"start"` // GTID position before its first event
	End       string `json:"end"`   // after its last
	// FirstGTID is the first GTID of each domain in the file.
	FirstGTID string    `json:"firstGtid"`
	First     time.Time `json:"first"` // its first and last transactions' times
	Last      time.Time `json:"last"`
	Max       time.Time `json:"max"` // the latest time of any of its events
	// Runs are its GTIDs in file order, as runs of one server.
	Runs   []topology.GTIDRun `json:"runs"`
	Size   int64              `json:"size"`
	SHA256 string             `json:"sha256"`
	// Data is the key of the file's copy, relative to the store's prefix.
	Data string `json:"data"`
}

// binlogDir is where namespace's group's archived binlogs live.
func binlogDir(namespace, group string) string { return objstore.Join(namespace, group, "binlog") }

// archiveKey names one file's copy. Its content's hash is part of it: a
// site whose data was replaced begins its binlog names again, maybe from
// the same Gtid_list (an empty one, say).
func archiveKey(namespace, group, site, file, sha string) string {
	return objstore.Join(binlogDir(namespace, group), site, file+"@"+sha[:32])
}

// Archiver copies a site's sealed binlogs into the store. Only the active,
// writable site's sidecar should run it (the caller decides).
type Archiver struct {
	Store                  *objstore.Store
	Namespace, Group, Site string
	// DB reaches the site's mysqld (SHOW BINARY LOGS).
	DB *sql.DB
	// Dir is the folder of the binlog files.
	Dir    string
	Logger *slog.Logger

	// seen remembers, per file name, the size and time of the file
	// last read and the key it was archived under: a sealed file is
	// read once per process, not on every pass.
	seen map[string]seenFile
}

type seenFile struct {
	size int64
	mod  time.Time
	key  string
}

// ArchiveSealed copies every sealed binlog (all but the one being written)
// that is not archived yet, the file first and its record last, and
// returns how many it copied.
func (a *Archiver) ArchiveSealed(ctx context.Context) (int, error) {
	names, err := a.sealed(ctx)
	if err != nil {
		return 0, err
	}
	done, err := a.archived(ctx)
	if err != nil {
		return 0, err
	}
	if a.seen == nil {
		a.seen = map[string]seenFile{}
	}
	n := 0
	for _, name := range names {
		path := filepath.Join(a.Dir, filepath.Base(name))
		fi, err := os.Stat(path)
		if err != nil {
			return n, fmt.Errorf("archive %s: %w", name, err)
		}
		if s, ok := a.seen[name]; ok && s.size == fi.Size() && s.mod.Equal(fi.ModTime()) && done[s.key] {
			continue
		}
		rec, err := a.describe(name, path)
		if err != nil {
			return n, err
		}
		if !done[rec.Data] {
			if err := a.upload(ctx, path, rec); err != nil {
				return n, err
			}
			n++
		}
		a.seen[name] = seenFile{size: fi.Size(), mod: fi.ModTime(), key: rec.Data}
		done[rec.Data] = true
	}
	return n, nil
}

// sealed lists the binlogs mysqld no longer writes, oldest first.
func (a *Archiver) sealed(ctx context.Context) ([]string, error) {
	rows, err := a.DB.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("archive: SHOW BINARY LOGS: %w", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	var names []string
	for rows.Next() {
		vals := make([]any, len(cols))
		var name string
		vals[0] = &name
		for i := 1; i < len(cols); i++ {
			vals[i] = new(sql.RawBytes)
		}
		if err := rows.Scan(vals...); err != nil {
			return nil, fmt.Errorf("archive: SHOW BINARY LOGS: %w", err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("archive: SHOW BINARY LOGS: %w", err)
	}
	if len(names) == 0 {
		return nil, nil
	}
	return names[:len(names)-1], nil
}

// archived is the set of data keys whose record is stored.
func (a *Archiver) archived(ctx context.Context) (map[string]bool, error) {
	objs, err := a.Store.List(ctx, objstore.Join(binlogDir(a.Namespace, a.Group), a.Site)+"/")
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	done := map[string]bool{}
	for _, o := range objs {
		if k, ok := strings.CutSuffix(o.Key, ".json"); ok {
			done[k] = true
		}
	}
	return done, nil
}

func (a *Archiver) describe(name, path string) (ArchivedFile, error) {
	d, err := scanBinlog(path)
	if err != nil {
		return ArchivedFile{}, fmt.Errorf("archive %s: %w", name, err)
	}
	start := d.Start.String()
	return ArchivedFile{Namespace: a.Namespace, Group: a.Group, Site: a.Site, File: name, Start: start, End: d.End.String(), FirstGTID: d.FirstGTID.String(),
		First: d.First, Last: d.Last, Max: d.Max, Runs: d.Runs, Size: d.Size, SHA256: d.SHA256,
		Data: archiveKey(a.Namespace, a.Group, a.Site, name, d.SHA256)}, nil
}

// upload stores the file, then its record, once the stored bytes are
// checked to be the ones read.
func (a *Archiver) upload(ctx context.Context, path string, rec ArchivedFile) error {
	name := rec.File
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	h := &hashCount{h: sha256.New()}
	n, err := a.Store.Put(ctx, rec.Data, io.TeeReader(f, h), "application/octet-stream")
	if err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if sum := hex.EncodeToString(h.h.Sum(nil)); n != rec.Size || sum != rec.SHA256 {
		_ = a.Store.Remove(context.WithoutCancel(ctx), rec.Data)
		return fmt.Errorf("%w: archive %s: stored %d bytes, %s; read %d, %s", ErrCorrupt, name, n, sum, rec.Size, rec.SHA256)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if _, err := a.Store.Put(ctx, rec.Data+".json", bytes.NewReader(b), "application/json"); err != nil {
		return fmt.Errorf("archive %s: record: %w", name, err)
	}
	if a.Logger != nil {
		a.Logger.Info("binlog archived", "file", name, "bytes", n, "end", rec.End)
	}
	return nil
}

// RefusedRecord is an archive record ListArchive left out, and why.
type RefusedRecord struct {
	Key string
	Err error
}

// ListArchive reads the records of namespace's group's archived binlogs,
// every site's. A file whose record is missing (its upload did not
// finish) is not listed; a record that cannot be read, is malformed, or
// does not match its key is left out and returned among the refused.
func ListArchive(ctx context.Context, store *objstore.Store, namespace, group string) ([]ArchivedFile, []RefusedRecord, error) {
	objs, err := store.List(ctx, binlogDir(namespace, group)+"/")
	if err != nil {
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	var out []ArchivedFile
	var refused []RefusedRecord
	for _, o := range objs {
		key, ok := strings.CutSuffix(o.Key, ".json")
		if !ok {
			continue
		}
		rec, err := readRecord(ctx, store, key)
		if err == nil {
			err = rec.matches(namespace, group)
		}
		if err != nil {
			refused = append(refused, RefusedRecord{Key: key, Err: err})
			continue
		}
		out = append(out, rec)
	}
	return out, refused, nil
}

// matches checks a record against its place: its key must be the one its
// own namespace, group, site, file and hash give, under the group listed.
func (r ArchivedFile) matches(namespace, group string) error {
	if r.Namespace != namespace || r.Group != group || !validName.MatchString(r.Site) || len(r.SHA256) != 64 ||
		r.Data != archiveKey(r.Namespace, r.Group, r.Site, r.File, r.SHA256) {
		return fmt.Errorf("%w: archive record %s names %s/%s/%s file %q", ErrInvalid, r.Data, r.Namespace, r.Group,
			r.Site, r.File)
	}
	if _, err := parseRecord(r); err != nil {
		return err
	}
	return nil
}

// decodeRecord reads the record of the file stored under key.
func decodeRecord(r io.Reader, key string) (ArchivedFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxManifest))
	if err != nil {
		return ArchivedFile{}, fmt.Errorf("archive record %s: %w", key, err)
	}
	var rec ArchivedFile
	if err := json.Unmarshal(b, &rec); err != nil {
		return ArchivedFile{}, fmt.Errorf("%w: archive record %s: %w", ErrInvalid, key, err)
	}
	if rec.Data != key || rec.Size <= 0 || len(rec.SHA256) != 64 {
		return ArchivedFile{}, fmt.Errorf("%w: archive record %s names %q, size %d", ErrInvalid, key, rec.Data, rec.Size)
	}
	return rec, nil
}

// parseRecord turns a record into PlanPITR's input.
func parseRecord(r ArchivedFile) (topology.ArchivedBinlog, error) {
	start, err := gtid.ParsePos(r.Start)
	if err != nil {
		return topology.ArchivedBinlog{}, fmt.Errorf("%w: archive record %s: start: %w", ErrInvalid, r.Data, err)
	}
	end, err := gtid.ParsePos(r.End)
	if err != nil {
		return topology.ArchivedBinlog{}, fmt.Errorf("%w: archive record %s: end: %w", ErrInvalid, r.Data, err)
	}
	first, err := gtid.ParsePos(r.FirstGTID)
	if err != nil {
		return topology.ArchivedBinlog{}, fmt.Errorf("%w: archive record %s: first GTID: %w", ErrInvalid, r.Data, err)
	}
	if len(first) > 0 && len(r.Runs) == 0 {
		return topology.ArchivedBinlog{}, fmt.Errorf("%w: archive record %s: first GTID %s and no runs", ErrInvalid,
			r.Data, first)
	}
	return topology.ArchivedBinlog{Site: r.Site, File: r.Data, Start: start, End: end, Runs: r.Runs, First: r.First,
		Last: r.Last, Max: r.Max}, nil
}

// planInput turns records checked by ListArchive into PlanPITR's input.
func planInput(recs []ArchivedFile) []topology.ArchivedBinlog {
	out := make([]topology.ArchivedBinlog, 0, len(recs))
	for _, r := range recs {
		b, err := parseRecord(r)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}
