package sidecar

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
)

// fileKeys is a Verifier backed by a PEM file of accepted public keys (the
// operator's ViewKeysConfigMap, mounted read-only). The runner reloads it at
// the start of every tick; it is parsed again only when its bytes change, so
// a rotation takes effect within one tick of the kubelet updating the file.
// A missing or bad file keeps the last good ring; with none, every view is
// refused (and the sidecar, renewing nothing, fences on its lease).
type fileKeys struct {
	path string
	ring atomic.Pointer[protocol.KeyRing]
	raw  []byte // last bytes read, good or bad; only the ticking goroutine touches it
}

// Verify implements Verifier.
func (k *fileKeys) Verify(v v1alpha1.ActiveSiteView) error { return k.ring.Load().Verify(v) }

// IDs are the accepted key ids, nil before a good file was read.
func (k *fileKeys) IDs() []string {
	if r := k.ring.Load(); r != nil {
		return r.IDs()
	}
	return nil
}

// reload reads the file. It reports whether the ring changed, and any error
// (the ring then stays as it was); a file that did not change since the last
// read, good or bad, reports neither.
func (k *fileKeys) reload() (bool, error) {
	raw, err := os.ReadFile(k.path)
	if err != nil {
		return false, fmt.Errorf("view keys %s: %w", k.path, err)
	}
	if bytes.Equal(raw, k.raw) {
		return false, nil
	}
	k.raw = raw
	ring, err := protocol.ParseKeyRing(raw)
	if err != nil {
		return false, fmt.Errorf("view keys %s: %w", k.path, err)
	}
	k.ring.Store(ring)
	return true, nil
}
