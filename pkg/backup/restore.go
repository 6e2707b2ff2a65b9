package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/objstore"
)

// maxManifest bounds a manifest read back: they are a few hundred bytes.
const maxManifest = 1 << 20

// Read returns the manifest of backup id of namespace's group:
// ErrNoManifest when there is none (it never completed), ErrInvalid when
// it is malformed or names another backup.
func Read(ctx context.Context, store *objstore.Store, namespace, group, id string) (Manifest, error) {
	keys := KeysFor(namespace, group, id)
	rc, err := store.Get(ctx, keys.Manifest)
	if objstore.IsNotFound(err) {
		return Manifest{}, fmt.Errorf("%w: %s", ErrNoManifest, keys.Dir)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifest))
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: manifest: %w", keys.Dir, err)
	}
	m, err := decodeManifest(b)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup %s: %w", keys.Dir, err)
	}
	if m.Namespace != namespace || m.Group != group || m.ID != id {
		return Manifest{}, fmt.Errorf("%w: manifest under %s names %s/%s/%s", ErrInvalid, keys.Dir, m.Namespace,
			m.Group, m.ID)
	}
	return m, nil
}

// Restore installs backup id of namespace's group into rcv's empty datadir (mysqld
// stopped) and returns its manifest. It fetches and prepares through rcv,
// checks the prepared position against the manifest, and only then
// installs: data that fails a check never reaches the datadir. rcv's URL
// and Client are not used; its Source is set here.
func Restore(ctx context.Context, store *objstore.Store, namespace, group, id string, rcv *clone.Receiver) (Manifest, error) {
	m, err := Read(ctx, store, namespace, group, id)
	if err != nil {
		return Manifest{}, err
	}
	rcv.Source = &objectSource{store: store, m: m}
	if err := rcv.Fetch(ctx); err != nil {
		return m, fmt.Errorf("restore %s/%s: %w", group, id, err)
	}
	if err := rcv.Prepare(ctx); err != nil {
		return m, fmt.Errorf("restore %s/%s: %w", group, id, err)
	}
	pos, err := rcv.Position()
	if err != nil {
		return m, fmt.Errorf("restore %s/%s: %w", group, id, err)
	}
	if pos != m.GTIDPosition {
		_ = rcv.Reset()
		return m, fmt.Errorf("%w: prepared %q, manifest %q", ErrPositionMismatch, pos, m.GTIDPosition)
	}
	if err := rcv.Install(ctx); err != nil {
		return m, fmt.Errorf("restore %s/%s: %w", group, id, err)
	}
	return m, nil
}

// objectSource streams a backup's data object, decompressed, and fails
// its end unless the stored bytes match the manifest.
type objectSource struct {
	store *objstore.Store
	m     Manifest
}

func (s *objectSource) String() string { return "backup " + s.m.Data }

func (s *objectSource) Open(ctx context.Context) (io.ReadCloser, error) {
	rc, err := s.store.Get(ctx, s.m.Data)
	if err != nil {
		return nil, err
	}
	v := &verifier{r: rc, h: sha256.New(), size: s.m.Size, sha: s.m.SHA256}
	dec, err := zstd.NewReader(v)
	if err != nil {
		_ = rc.Close()
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return &verifiedStream{dec: dec, v: v, body: rc}, nil
}

// verifier hashes and counts the stored bytes and, at their end, returns
// ErrCorrupt instead of io.EOF when they differ from the recorded size
// and SHA-256.
type verifier struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	size int64
	sha  string
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.size {
		return n, fmt.Errorf("%w: more than %d bytes", ErrCorrupt, v.size)
	}
	if errors.Is(err, io.EOF) {
		if got := hex.EncodeToString(v.h.Sum(nil)); v.n != v.size || got != v.sha {
			return n, fmt.Errorf("%w: %d bytes, sha256 %s; recorded %d bytes, %s", ErrCorrupt, v.n, got,
				v.size, v.sha)
		}
	}
	return n, err
}

// verifiedStream is the decompressed stream; at its end it reads the
// stored bytes to their end too, so the verifier always has its say.
type verifiedStream struct {
	dec  *zstd.Decoder
	v    *verifier
	body io.Closer
}

func (s *verifiedStream) Read(p []byte) (int, error) {
	n, err := s.dec.Read(p)
	if errors.Is(err, io.EOF) {
		if _, verr := io.Copy(io.Discard, s.v); verr != nil {
			return n, verr
		}
	}
	return n, err
}

func (s *verifiedStream) Close() error {
	s.dec.Close()
	return s.body.Close()
}
