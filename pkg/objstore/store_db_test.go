//go:build db

package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/objstore"
)

func newStore(t *testing.T, prefix string) (*objstore.Store, *testbed.ObjectStore) {
	t.Helper()
	gw := testbed.StartObjectStore(t)
	s, err := objstore.New(objstore.Config{Endpoint: gw.Endpoint, Bucket: "backups", Prefix: prefix, PathStyle: true,
		AccessKey: gw.AccessKey, SecretKey: gw.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(ctx); err != nil {
		t.Fatalf("second EnsureBucket: %v", err)
	}
	return s, gw
}

// TestRoundTripOnARealGateway stores an object larger than one part (a
// streamed multipart upload), reads it back byte for byte, lists it under
// the prefix and removes it.
func TestRoundTripOnARealGateway(t *testing.T) {
	s, gw := newStore(t, "shop")
	ctx := context.Background()
	data := make([]byte, 33<<20+123)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	n, err := s.Put(ctx, "orders/base-1/data.xb.zst", bytes.NewReader(data), "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(data)) {
		t.Fatalf("stored %d bytes, want %d", n, len(data))
	}
	if _, err := s.Put(ctx, "orders/base-1/manifest.json", bytes.NewReader([]byte(`{}`)), "application/json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(gw.Dir, "backups", "shop", "orders", "base-1", "manifest.json")); err != nil {
		t.Fatalf("the gateway holds no file for the object: %v", err)
	}
	rc, err := s.Get(ctx, "orders/base-1/data.xb.zst")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d stored", len(got), len(data))
	}
	objs, err := s.List(ctx, "orders/")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Key != "orders/base-1/data.xb.zst" || objs[1].Key != "orders/base-1/manifest.json" {
		t.Fatalf("listed %+v", objs)
	}
	if err := s.Remove(ctx, "orders/base-1/data.xb.zst"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, "orders/base-1/data.xb.zst"); err != nil {
		t.Fatalf("removing a missing object: %v", err)
	}
	if _, err := s.Get(ctx, "orders/base-1/data.xb.zst"); !objstore.IsNotFound(err) {
		t.Fatalf("get after remove: %v", err)
	}
}

// failingReader yields n bytes and then fails, as a backup stream whose
// source died.
type failingReader struct{ n int }

var errSourceDied = errors.New("source died")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errSourceDied
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// TestFailedUploadLeavesNothing: a stream that breaks after more than one
// part must not leave an object that a restore could take for a backup.
func TestFailedUploadLeavesNothing(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	_, err := s.Put(ctx, "broken", &failingReader{n: 40 << 20}, "")
	if !errors.Is(err, errSourceDied) {
		t.Fatalf("want the source's error, got %v", err)
	}
	if _, err := s.Stat(ctx, "broken"); !objstore.IsNotFound(err) {
		t.Fatalf("a failed upload left an object: %v", err)
	}
}

// TestWrongKeysAreRefused: the gateway checks signatures, so a store
// configured with another secret is refused, not served.
func TestWrongKeysAreRefused(t *testing.T) {
	gw := testbed.StartObjectStore(t)
	s, err := objstore.New(objstore.Config{Endpoint: gw.Endpoint, Bucket: "backups", PathStyle: true,
		AccessKey: gw.AccessKey, SecretKey: "not-the-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background()); err == nil {
		t.Fatal("a wrong secret was accepted")
	}
}
