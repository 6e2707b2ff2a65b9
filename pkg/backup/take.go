package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/shipstream/bloodraven/pkg/objstore"
)

// Streamer is a source site's backup stream: pkg/clone's Donor. It writes
// the xbstream to w and mariadb-backup's xtrabackup_info into infoDir.
type Streamer interface {
	StreamBackup(ctx context.Context, w io.Writer, infoDir string) (int64, error)
}

// Request names a backup to take.
type Request struct {
	ID, Namespace, Group, Site string
	// TempDir holds mariadb-backup's info while it runs (default os.TempDir()).
	TempDir string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (r Request) validate() error {
	if !validName.MatchString(r.ID) || !validName.MatchString(r.Namespace) || !validName.MatchString(r.Group) ||
		!validName.MatchString(r.Site) {
		return fmt.Errorf("%w: backup id %q namespace %q group %q site %q", ErrInvalid, r.ID, r.Namespace, r.Group,
			r.Site)
	}
	return nil
}

func (r Request) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

// Take streams a base backup from src into store, compressed, and writes
// its manifest last. It refuses an id whose manifest exists. Each attempt
// writes its own data object, named by its manifest: on failure no
// manifest is written and only this attempt's data object is removed, so
// a concurrent attempt at the same id never loses its data to this one.
func Take(ctx context.Context, src Streamer, store *objstore.Store, req Request) (Manifest, error) {
	if err := req.validate(); err != nil {
		return Manifest{}, err
	}
	keys := KeysFor(req.Namespace, req.Group, req.ID)
	if _, err := store.Stat(ctx, keys.Manifest); err == nil {
		return Manifest{}, fmt.Errorf("%w: backup %s already exists", ErrInvalid, keys.Dir)
	} else if !objstore.IsNotFound(err) {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	infoDir, err := os.MkdirTemp(req.TempDir, "backup-info-")
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	defer func() { _ = os.RemoveAll(infoDir) }()
	data, err := keys.newDataKey()
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	m := Manifest{Version: ManifestVersion, ID: req.ID, Namespace: req.Namespace, Group: req.Group, Site: req.Site,
		Method: "mariadb-backup", StartTime: req.now(), Data: data, Compression: "zstd"}
	sum, err := upload(ctx, src, store, data, infoDir)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	coords, err := readInfo(infoDir)
	if err != nil {
		_ = store.Remove(context.WithoutCancel(ctx), data)
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	if coords.EndTime.IsZero() {
		_ = store.Remove(context.WithoutCancel(ctx), data)
		return Manifest{}, fmt.Errorf("backup %s: %w: xtrabackup_info has no end_time", keys.Dir, ErrNoPosition)
	}
	m.GTIDPosition, m.BinlogFile, m.BinlogOffset = coords.Position, coords.File, coords.Offset
	m.ConsistentTime = coords.EndTime
	m.Size, m.SHA256, m.RawSize, m.StopTime = sum.size, sum.sha256, sum.raw, req.now()
	if err := putManifest(ctx, store, keys, m); err != nil {
		_ = store.Remove(context.WithoutCancel(ctx), data)
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	return m, nil
}

// uploaded is what upload measured.
type uploaded struct {
	size, raw int64
	sha256    string
}

// upload pipes the source's stream through zstd and a hash into the store.
func upload(ctx context.Context, src Streamer, store *objstore.Store, key, infoDir string) (uploaded, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	h := &hashCount{h: sha256.New()}
	type result struct {
		raw int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		enc, err := zstd.NewWriter(io.MultiWriter(pw, h), zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			_ = pw.CloseWithError(err)
			done <- result{err: err}
			return
		}
		raw, err := src.StreamBackup(ctx, enc, infoDir)
		err = errors.Join(err, enc.Close())
		_ = pw.CloseWithError(err) // nil closes it cleanly
		done <- result{raw, err}
	}()
	n, putErr := store.Put(ctx, key, pr, "application/zstd")
	if putErr != nil {
		_ = pr.CloseWithError(putErr)
		cancel()
	}
	res := <-done
	switch {
	case res.err != nil:
		_ = store.Remove(context.WithoutCancel(ctx), key)
		return uploaded{}, fmt.Errorf("stream: %w", res.err)
	case putErr != nil:
		return uploaded{}, putErr
	case n != h.n:
		_ = store.Remove(context.WithoutCancel(ctx), key)
		return uploaded{}, fmt.Errorf("%w: stored %d bytes of %d", ErrCorrupt, n, h.n)
	}
	return uploaded{size: n, raw: res.raw, sha256: hex.EncodeToString(h.h.Sum(nil))}, nil
}

func putManifest(ctx context.Context, store *objstore.Store, keys Keys, m Manifest) error {
	if err := m.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	_, err = store.Put(ctx, keys.Manifest, bytes.NewReader(append(b, '\n')), "application/json")
	return err
}

// hashCount hashes and counts what is written through it.
type hashCount struct {
	h hash.Hash
	n int64
}

func (c *hashCount) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	return len(p), nil
}
