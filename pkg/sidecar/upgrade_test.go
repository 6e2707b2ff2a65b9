package sidecar_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// execRecorder stands in for syscall.Exec: it records the call and fails,
// so the test process goes on.
type execRecorder struct {
	mu   sync.Mutex
	path string
	env  []string
}

func (e *execRecorder) exec(path string, _, env []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.path, e.env = path, env
	return os.ErrPermission
}

func (e *execRecorder) called() (string, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.path, e.env
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// upgradeBed is a TLS sidecar whose peer port is served, with a fake exec.
type upgradeBed struct {
	b    *tlsBed
	url  string
	dir  string
	exec *execRecorder
	r    *sidecar.Runner
}

func newUpgradeBed(t *testing.T, maxBytes int64) *upgradeBed {
	t.Helper()
	b := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	op := serve(t, b.source(t, b.ca, pki.OperatorIdentity()), viewServer("iad", 4))
	u := &upgradeBed{b: b, dir: t.TempDir(), exec: &execRecorder{}}
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: op,
		Logger: quietLogger(), TLS: self, StateDir: u.dir, ExecutableHash: hashOf([]byte("old binary")),
		Upgrade: sidecar.Upgrade{MaxBytes: maxBytes, Exec: u.exec.exec, Args: []string{"sidecar"}}},
		&fakeDB{writable: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	u.r = r
	u.url = serve(t, self, r.PeerHandler())
	return u
}

// post sends an upgrade as id (a zero Identity: no client certificate).
func (u *upgradeBed) post(t *testing.T, id pki.Identity, body []byte, hash string) int {
	t.Helper()
	var src pki.Source = pki.StaticSource{Roots: u.b.ca.Pool()}
	if id != (pki.Identity{}) {
		src = u.b.source(t, u.b.ca, id)
	}
	client := &http.Client{Transport: &http.Transport{DialTLSContext: pki.DialTLS(src, func(context.Context, string) (pki.Identity, error) {
		return pki.SiteIdentity("shop", "orders", "iad"), nil
	}, time.Now)}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u.url+v1alpha1.PathSidecarUpgrade, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if hash != "" {
		req.Header.Set(v1alpha1.HeaderExecutableHash, hash)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestUpgradeRefusals(t *testing.T) {
	binary := []byte("new binary")
	cases := []struct {
		name   string
		id     pki.Identity
		body   []byte
		hash   string
		code   int
		result string
	}{
		{"wrong hash", pki.OperatorIdentity(), binary, hashOf([]byte("something else")), http.StatusBadRequest, sidecar.UpgradeBadHash},
		{"malformed hash", pki.OperatorIdentity(), binary, "abc", http.StatusBadRequest, sidecar.UpgradeBadHash},
		{"oversize", pki.OperatorIdentity(), bytes.Repeat([]byte("x"), 4096), hashOf(bytes.Repeat([]byte("x"), 4096)),
			http.StatusRequestEntityTooLarge, sidecar.UpgradeTooLarge},
		{"a peer site's certificate", pki.SiteIdentity("shop", "orders", "pdx"), binary, hashOf(binary), http.StatusForbidden, sidecar.UpgradeWrongIdentity},
		{"its own site's certificate", pki.SiteIdentity("shop", "orders", "iad"), binary, hashOf(binary), http.StatusForbidden, sidecar.UpgradeWrongIdentity},
		{"no certificate", pki.Identity{}, binary, hashOf(binary), http.StatusUnauthorized, sidecar.UpgradeNoCertificate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUpgradeBed(t, 1024)
			if code := u.post(t, c.id, c.body, c.hash); code != c.code {
				t.Fatalf("status %d, want %d", code, c.code)
			}
			if p, _ := u.exec.called(); p != "" {
				t.Fatalf("re-executed %s after a refusal", p)
			}
			if _, err := os.Stat(filepath.Join(u.dir, "sidecar-bin", sidecar.UpgradeBinary)); !os.IsNotExist(err) {
				t.Fatalf("a refused binary was written: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(u.dir, "sidecar-bin", "*")); len(left) > 0 {
				t.Fatalf("temporary files left: %v", left)
			}
			_, body := get(t, u.r.HealthHandler(), sidecar.PathMetrics)
			if want := sidecar.MetricUpgrades + `{result="` + c.result + `"} 1`; !strings.Contains(body, want) {
				t.Fatalf("metrics lack %s", want)
			}
		})
	}
}

func TestUpgradeWithoutTLSIsRefused(t *testing.T) {
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys},
		OperatorURL: "http://127.0.0.1:1", Logger: quietLogger(), StateDir: t.TempDir(),
		Upgrade: sidecar.Upgrade{Exec: func(string, []string, []string) error { t.Fatal("exec"); return nil }}},
		&fakeDB{writable: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	r.PeerHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, v1alpha1.PathSidecarUpgrade, strings.NewReader("x")))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status %d, want 403", rec.Code)
	}
}

// TestUpgradeSwapsAndReexecs: the operator's binary with the right hash is
// written in place and executed with the handover in the environment.
func TestUpgradeSwapsAndReexecs(t *testing.T) {
	u := newUpgradeBed(t, 1024)
	u.r.Tick(t.Context()) // hears the operator: a view to hand over
	binary := []byte("new binary")
	if code := u.post(t, pki.OperatorIdentity(), binary, hashOf(binary)); code != http.StatusAccepted {
		t.Fatalf("status %d, want 202", code)
	}
	var path string
	var env []string
	for deadline := time.Now().Add(2 * time.Second); path == "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		path, env = u.exec.called()
	}
	if want := filepath.Join(u.dir, "sidecar-bin", sidecar.UpgradeBinary); path != want {
		t.Fatalf("exec %q, want %q", path, want)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, binary) {
		t.Fatalf("binary on disk %q, %v", got, err)
	}
	var h *sidecar.Handover
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, sidecar.HandoverEnv+"="); ok {
			if h, err = sidecar.DecodeHandover(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if h == nil || h.View == nil || h.View.Generation != 4 || h.AwaitingOperator {
		t.Fatalf("handover %+v: the fencing state is not handed over", h)
	}
	// The same hash again: already running it, nothing to do.
	if code := u.post(t, pki.OperatorIdentity(), []byte("old binary"), hashOf([]byte("old binary"))); code != http.StatusOK {
		t.Fatalf("current hash: status %d, want 200", code)
	}
}

// TestUpgradeDuringTerminationIsRefused: once the Pod's termination began,
// an upgrade (or a restart in place) is refused with 409 before anything
// is written: a new process would not know the termination began, and the
// kubelet's preStop request would be cut.
func TestUpgradeDuringTerminationIsRefused(t *testing.T) {
	u := newUpgradeBed(t, 1024)
	u.r.Tick(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	u.r.Terminate(ctx) // begins the run and returns at once
	if !u.r.Terminating() {
		t.Fatal("no termination began")
	}
	binary := []byte("new binary")
	if code := u.post(t, pki.OperatorIdentity(), binary, hashOf(binary)); code != http.StatusConflict {
		t.Fatalf("upgrade while terminating: status %d, want 409", code)
	}
	if code := u.post(t, pki.OperatorIdentity(), nil, ""); code != http.StatusConflict {
		t.Fatalf("restart in place while terminating: status %d, want 409", code)
	}
	time.Sleep(100 * time.Millisecond) // an accepted exec would have run by now
	if p, _ := u.exec.called(); p != "" {
		t.Fatalf("re-executed %s during the termination", p)
	}
	if left, _ := filepath.Glob(filepath.Join(u.dir, "sidecar-bin", "*")); len(left) > 0 {
		t.Fatalf("files written during the termination: %v", left)
	}
	_, body := get(t, u.r.HealthHandler(), sidecar.PathMetrics)
	if want := sidecar.MetricUpgrades + `{result="` + sidecar.UpgradeTerminating + `"} 2`; !strings.Contains(body, want) {
		t.Fatalf("metrics lack %s", want)
	}
}
