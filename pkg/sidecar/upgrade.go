package sidecar

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/exehash"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// The in-place upgrade (docs/upgrades.md): POST /sidecar/upgrade on the
// peer port, for the operator's certificate only. The body is the new
// binary and HeaderExecutableHash its SHA-256. The sidecar
//   - refuses anyone but the operator (401 without a certificate, 403
//     with a peer's or anyone else's; counted and logged), and every
//     upgrade when it serves no TLS (403);
//   - answers 200 without reading the body when it already runs that hash;
//   - refuses a body over Upgrade.MaxBytes (413) and one that does not
//     hash to the header (400), keeping its binary;
//   - writes the binary to a temporary file in Upgrade.Dir (a directory
//     only its user may write), syncs it, renames it into place and syncs
//     the directory;
//   - refuses to re-execute while it holds the write hold on a fenced
//     mysqld (409): the hold is a session of this process, which exec
//     would close, letting privileged accounts write;
//   - refuses (409) while a run of fences keeps failing, whose escalation
//     budget lives in this process only, and once the Pod's termination
//     began (before reading the body): the new process would not know it
//     began. The exec itself is decided under the termination's lock;
//   - answers 202, then re-executes the new binary with the same arguments
//     and the handover (handover.go). mysqld runs in its own container and
//     is not touched.
//
// An empty body without the header re-executes the binary as it is
// (kubectl bloodraven restart-inplace): a swap that changes nothing.

// MetricUpgrades counts POST /sidecar/upgrade by result.
const MetricUpgrades = "bloodraven_sidecar_upgrades_total"

// Results of an upgrade request.
const (
	UpgradeReexec        = "reexec"
	UpgradeCurrent       = "current"
	UpgradeNoTLS         = "no-tls"
	UpgradeNoCertificate = RefreshNoCertificate
	UpgradeUntrusted     = RefreshUntrusted
	UpgradeWrongIdentity = RefreshWrongIdentity
	UpgradeBadHash       = "bad-hash"
	UpgradeTooLarge      = "too-large"
	UpgradeWriteHeld     = "write-held"
	UpgradeBusy          = "busy"
	UpgradeTerminating   = "terminating"
	UpgradeFenceFailing  = "fence-failing"
	UpgradeFailed        = "failed"
)

// UpgradeBinary is the name of the upgraded binary in Upgrade.Dir.
const UpgradeBinary = "bloodraven-sidecar"

// DefaultUpgradeMaxBytes bounds an upgrade's body by default.
const DefaultUpgradeMaxBytes = 256 << 20

// Upgrade says where an in-place upgrade writes the binary and how the
// process re-executes itself.
type Upgrade struct {
	// Dir receives the upgraded binary (default: "sidecar-bin" in
	// Config.StateDir; without either, upgrades with a body are refused).
	Dir string
	// MaxBytes bounds the body (default DefaultUpgradeMaxBytes).
	MaxBytes int64
	// Args are the arguments to re-execute with (default os.Args).
	Args []string
	// Exec replaces the process (default syscall.Exec); it returns only on failure.
	Exec func(path string, argv, env []string) error
	// Executable is the running binary (default os.Executable).
	Executable func() (string, error)
}

func (u Upgrade) withDefaults(stateDir string) Upgrade {
	if u.Dir == "" && stateDir != "" {
		u.Dir = filepath.Join(stateDir, "sidecar-bin")
	}
	if u.MaxBytes <= 0 {
		u.MaxBytes = DefaultUpgradeMaxBytes
	}
	if u.Args == nil {
		u.Args = os.Args
	}
	if u.Exec == nil {
		u.Exec = syscall.Exec
	}
	if u.Executable == nil {
		u.Executable = os.Executable
	}
	return u
}

// upgradeError is a refusal: the HTTP status and the metric's result.
type upgradeError struct {
	code   int
	result string
	err    error
}

func (e *upgradeError) Error() string { return e.err.Error() }
func (e *upgradeError) Unwrap() error { return e.err }

func refuse(code int, result string, err error) *upgradeError {
	return &upgradeError{code: code, result: result, err: err}
}

// upgradeHandler serves POST /sidecar/upgrade.
func (r *Runner) upgradeHandler() http.HandlerFunc {
	counts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricUpgrades,
		Help: "POST /sidecar/upgrade by result: reexec, current, or why it was refused."}, []string{"result"})
	for _, res := range []string{UpgradeReexec, UpgradeCurrent, UpgradeNoTLS, UpgradeNoCertificate, UpgradeUntrusted,
		UpgradeWrongIdentity, UpgradeBadHash, UpgradeTooLarge, UpgradeWriteHeld, UpgradeBusy, UpgradeTerminating,
		UpgradeFenceFailing, UpgradeFailed} {
		counts.WithLabelValues(res)
	}
	if err := r.metrics.reg.Register(counts); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				counts = c
			}
		}
	}
	return func(w http.ResponseWriter, req *http.Request) {
		path, err := r.upgrade(w, req)
		var ue *upgradeError
		switch {
		case errors.As(err, &ue):
			counts.WithLabelValues(ue.result).Inc()
			r.log.Warn("upgrade refused", "result", ue.result, "error", ue.err)
			writeJSON(w, ue.code, map[string]string{"error": ue.err.Error(), "result": ue.result})
			return
		case path == "":
			counts.WithLabelValues(UpgradeCurrent).Inc()
			writeJSON(w, http.StatusOK, map[string]string{"result": UpgradeCurrent, "executableHash": r.cfg.ExecutableHash})
			return
		}
		counts.WithLabelValues(UpgradeReexec).Inc()
		r.reexec(w, path)
	}
}

// upgrade checks the request and stages the binary; it returns the path to
// re-execute, "" when the sidecar already runs the binary, with fenceMu
// held when the path is set (reexec releases it only on failure).
func (r *Runner) upgrade(w http.ResponseWriter, req *http.Request) (string, error) {
	if err := r.operatorOnly(req); err != nil {
		return "", err
	}
	if r.Terminating() {
		return "", refuse(http.StatusConflict, UpgradeTerminating,
			fmt.Errorf("%w: a re-exec would cut the smart-then-fast shutdown", ErrTerminating))
	}
	want := req.Header.Get(v1alpha1.HeaderExecutableHash)
	var path string
	switch {
	case want == "" && req.ContentLength == 0:
		exe, err := r.cfg.Upgrade.Executable()
		if err != nil {
			return "", refuse(http.StatusInternalServerError, UpgradeFailed, fmt.Errorf("locate own binary: %w", err))
		}
		path = exe
	case !exehash.Valid(want):
		return "", refuse(http.StatusBadRequest, UpgradeBadHash,
			fmt.Errorf("%w: %s must be %d lowercase hex digits", ErrHashMismatch, v1alpha1.HeaderExecutableHash, exehash.Len))
	case want == r.cfg.ExecutableHash:
		return "", nil
	default:
		p, err := r.stage(w, req, want)
		if err != nil {
			return "", err
		}
		path = p
	}
	if err := r.lockForExec(); err != nil {
		return "", err
	}
	return path, nil
}

// operatorOnly lets only the operator's certificate through.
func (r *Runner) operatorOnly(req *http.Request) error {
	if r.cfg.TLS == nil {
		return refuse(http.StatusForbidden, UpgradeNoTLS, fmt.Errorf("%w: upgrades need mutual TLS", pki.ErrWrongIdentity))
	}
	pool, err := r.cfg.TLS.Pool()
	if err != nil {
		return refuse(http.StatusUnauthorized, UpgradeUntrusted, err)
	}
	id, err := pki.PeerIdentity(req.TLS, pool, time.Now())
	switch {
	case errors.Is(err, pki.ErrNoCertificate):
		return refuse(http.StatusUnauthorized, UpgradeNoCertificate, err)
	case err != nil:
		return refuse(http.StatusUnauthorized, UpgradeUntrusted, err)
	case id.Kind != pki.KindOperator:
		return refuse(http.StatusForbidden, UpgradeWrongIdentity,
			fmt.Errorf("%w: %s may not upgrade a sidecar", pki.ErrWrongIdentity, id))
	}
	return nil
}

// stage writes the body to Upgrade.Dir if it hashes to want, atomically.
func (r *Runner) stage(w http.ResponseWriter, req *http.Request, want string) (string, error) {
	u := r.cfg.Upgrade
	if u.Dir == "" {
		return "", refuse(http.StatusConflict, UpgradeFailed, errors.New("no directory for an upgraded binary (no state dir)"))
	}
	if req.ContentLength > u.MaxBytes {
		return "", refuse(http.StatusRequestEntityTooLarge, UpgradeTooLarge,
			fmt.Errorf("body of %d bytes, at most %d", req.ContentLength, u.MaxBytes))
	}
	// The peer server's read timeout is for views; a binary takes longer.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(5 * time.Minute))
	if err := os.MkdirAll(u.Dir, 0o700); err != nil {
		return "", refuse(http.StatusInternalServerError, UpgradeFailed, fmt.Errorf("upgrade dir: %w", err))
	}
	tmp, err := os.CreateTemp(u.Dir, UpgradeBinary+".tmp-*")
	if err != nil {
		return "", refuse(http.StatusInternalServerError, UpgradeFailed, fmt.Errorf("upgrade: %w", err))
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op after the rename
	got, err := exehash.Reader(io.TeeReader(http.MaxBytesReader(w, req.Body, u.MaxBytes), tmp))
	if err == nil {
		err = tmp.Chmod(0o700)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return "", refuse(http.StatusRequestEntityTooLarge, UpgradeTooLarge, fmt.Errorf("body over %d bytes", u.MaxBytes))
	case err != nil:
		return "", refuse(http.StatusBadRequest, UpgradeFailed, fmt.Errorf("read upgrade: %w", err))
	case got != want:
		return "", refuse(http.StatusBadRequest, UpgradeBadHash, fmt.Errorf("%w: body hashes to %s, header says %s", ErrHashMismatch, got, want))
	}
	path := filepath.Join(u.Dir, UpgradeBinary)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", refuse(http.StatusInternalServerError, UpgradeFailed, fmt.Errorf("upgrade: %w", err))
	}
	if d, err := os.Open(u.Dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return path, nil
}

// lockForExec takes fenceMu, so that no fence or hold change runs while the
// process is replaced, and refuses while the write hold is held.
func (r *Runner) lockForExec() error {
	deadline := time.Now().Add(r.cfg.FenceTimeout)
	for !r.fenceMu.TryLock() {
		if time.Now().After(deadline) {
			return refuse(http.StatusServiceUnavailable, UpgradeBusy, errors.New("a fence is running"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	held, failing := r.hold.h != nil, !r.esc.failingSince.IsZero()
	r.mu.Unlock()
	var err error
	switch {
	case held:
		err = refuse(http.StatusConflict, UpgradeWriteHeld,
			fmt.Errorf("%w: a re-exec would release the global read lock on the fenced mysqld", ErrWriteHeld))
	case failing:
		err = refuse(http.StatusConflict, UpgradeFenceFailing,
			fmt.Errorf("%w: a re-exec would restart its escalation budget", ErrFenceFailing))
	case r.Terminating():
		err = refuse(http.StatusConflict, UpgradeTerminating,
			fmt.Errorf("%w: a re-exec would cut the smart-then-fast shutdown", ErrTerminating))
	}
	if err != nil {
		r.fenceMu.Unlock()
	}
	return err
}

// reexec answers 202 and replaces the process with path, handing over the
// loop's state. The caller holds fenceMu; it is released only if exec fails.
func (r *Runner) reexec(w http.ResponseWriter, path string) {
	r.mu.Lock()
	h := r.loop.handover(r.cfg.Clock.Now())
	h.LastSeen = r.st.db
	gen := r.loop.Floor()
	r.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]string{"result": UpgradeReexec, "path": path})
	_ = http.NewResponseController(w).Flush()
	r.log.Info("re-executing in place", "path", path, "generation", gen)
	time.Sleep(50 * time.Millisecond) // lets the answer leave before exec closes the socket
	env := append(withoutEnv(os.Environ(), HandoverEnv), HandoverEnv+"="+EncodeHandover(h))
	err := r.execUnlessTerminating(path, env)
	r.fenceMu.Unlock()
	r.log.Error("re-exec failed; the running process goes on", "path", path, "error", err)
}

// execUnlessTerminating replaces the process unless a termination began,
// deciding under the termination's lock and holding it through execve: a
// termination that began first stops the exec, and one asked for after
// waits for it (and runs in full if it fails). A SIGTERM taken by this
// process in that instant is lost with it; the kubelet's preStop request
// then reaches the new process.
func (r *Runner) execUnlessTerminating(path string, env []string) error {
	r.term.mu.Lock()
	defer r.term.mu.Unlock()
	if r.term.plan != nil {
		return fmt.Errorf("%w: not re-executed", ErrTerminating)
	}
	return r.cfg.Upgrade.Exec(path, r.cfg.Upgrade.Args, env)
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
