package sidecar_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// signingOperator serves iad at generation 4, signed with whichever key is current.
type signingOperator struct {
	signer atomic.Pointer[protocol.Signer]
	mu     sync.Mutex
	seen   []string // key ids served
}

func (o *signingOperator) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	v := o.signer.Load().Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: "iad",
		Generation: 4, ObservedAt: time.Now(), Operator: "op-1", Source: v1alpha1.SourceOperator})
	o.mu.Lock()
	o.seen = append(o.seen, v.KeyID)
	o.mu.Unlock()
	_ = json.NewEncoder(w).Encode(v)
}

func writeKeys(t *testing.T, file string, pubs ...ed25519.PublicKey) {
	t.Helper()
	pem, err := protocol.EncodePublicKeys(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	// Like the kubelet: a new file renamed into place.
	tmp := file + ".new"
	if err := os.WriteFile(tmp, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// TestKeyRotationOnARunningSidecar rotates the view-signing key under a
// running sidecar whose mysqld is the writable primary, following
// docs/security.md: accept both keys, sign with the new one, drop the old.
// The sidecar must never fence, never refuse a view, and keep its lease.
func TestKeyRotationOnARunningSidecar(t *testing.T) {
	oldKey, newKey := sidecar.TestSigner, sidecar.OtherSigner
	op := &signingOperator{}
	op.signer.Store(oldKey)
	opSrv := httptest.NewServer(op)
	defer opSrv.Close()
	file := filepath.Join(t.TempDir(), "keys.pem")
	writeKeys(t, file, oldKey.Public())
	db := &fakeDB{}
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: 600 * time.Millisecond, PeerCheckInterval: 100 * time.Millisecond}, OperatorURL: opSrv.URL,
		ViewKeysFile: file, StateDir: t.TempDir(), Logger: quietLogger()}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(t, 2*time.Second, "first view", func() bool { return !r.Status().AwaitingOperator })
	db.mu.Lock()
	db.writable = true // the operator re-asserts iad
	db.mu.Unlock()
	keysAre := func(ids ...string) func() bool {
		return func() bool { return slices.Equal(r.Status().ViewKeys, ids) }
	}
	ids := func(pubs ...ed25519.PublicKey) []string {
		k, _ := protocol.NewKeyRing(pubs...)
		return k.IDs()
	}
	heldKey := func(id string) func() bool {
		return func() bool { v := r.Status().View; return v != nil && v.KeyID == id }
	}
	steps := []struct {
		name string
		do   func()
		wait func() bool
	}{
		{"1: accept the new key too", func() { writeKeys(t, file, oldKey.Public(), newKey.Public()) },
			keysAre(ids(oldKey.Public(), newKey.Public())...)},
		{"2: sign with the new key", func() { op.signer.Store(newKey) }, heldKey(newKey.KeyID())},
		{"3: drop the old key", func() { writeKeys(t, file, newKey.Public()) }, keysAre(newKey.KeyID())},
	}
	for _, s := range steps {
		s.do()
		waitFor(t, 2*time.Second, s.name, s.wait)
		time.Sleep(300 * time.Millisecond) // a few ticks in this state
		if w, fences := db.state(); !w || fences != 0 {
			t.Fatalf("%s: writable %v after %d fences", s.name, w, fences)
		}
		if st := r.Status(); st.LeaseRemainingSeconds < 0.3 {
			t.Fatalf("%s: lease remaining %.2fs", s.name, st.LeaseRemainingSeconds)
		}
	}
	if n := rejected(t, r); n != 0 {
		t.Fatalf("%v views refused during the rotation", n)
	}
	// After step 3 a view signed with the old key is refused.
	op.signer.Store(oldKey)
	waitFor(t, 2*time.Second, "refusal of the old key", func() bool { return rejected(t, r) > 0 })
}

// rejected sums bloodraven_sidecar_rejected_views_total over its reasons.
func rejected(t *testing.T, r *sidecar.Runner) float64 {
	t.Helper()
	_, body := get(t, r.Handler(), sidecar.PathMetrics)
	var n float64
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, sidecar.MetricRejectedViews+"{") {
			var v float64
			f := strings.Fields(line)
			_ = json.Unmarshal([]byte(f[len(f)-1]), &v)
			n += v
		}
	}
	return n
}
