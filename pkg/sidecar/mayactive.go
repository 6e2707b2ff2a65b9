package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A sidecar restarted while its site is frozen (the container restarted by
// the kubelet inside a node that then stalls, or mysqld alone frozen while
// its sidecar restarts) boots knowing nothing of mysqld. Reading it first,
// as every boot does to spare a replica's read-only sessions, leaves a
// window on thaw: the read takes up to StatusTimeout, and pooled clients of
// a mysqld the operator had made writable write meanwhile, though another
// site may have been promoted on the lease deadline (simulation seeds
// 19134, 30972, 45025, 300264). The operator makes a site writable only
// after its sidecar adopted a view naming it, so that adoption is what a
// new process must know of. The ActiveFile records it: written, durably,
// before the adopted view can be seen by anyone (the report echoing it or
// /peer/active-site), and cleared once mysqld was seen read-only, or
// fenced, under a view naming another site. A process that boots with it
// set fences before it reads, as the wake-up rule does (wake.go). For a
// primary that costs nothing: its boot fences a writable mysqld anyway.

// ActiveFile is the file, in Config.StateDir, holding "1" while mysqld may
// have been made writable as the active site (above).
const ActiveFile = "bloodraven-sidecar-active"

// readActive reads the record in dir: false when there is none. An
// unreadable or malformed record counts as set: fencing first is safe.
func readActive(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, ActiveFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("read active record: %w", err)
	}
	switch strings.TrimSpace(string(b)) {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return true, fmt.Errorf("active record %q: %w", b, ErrMalformed)
}

// noteActive keeps the record in step with the view held and mysqld's state
// db, read or fenced under it. The caller holds r.mu, so that a view naming
// this site is recorded before anyone can see it adopted; the write happens
// only when the record changes (a promotion, a demotion).
func (r *Runner) noteActive(db DBState) {
	v, held := r.loop.View()
	switch {
	case !held:
		return
	case v.ActiveSite == r.cfg.Site && !r.mayActive:
		r.mayActive = true
	case v.ActiveSite != r.cfg.Site && r.mayActive && db == DBReadOnly:
		r.mayActive = false
	default:
		return
	}
	if r.cfg.StateDir == "" {
		return
	}
	val := "0\n"
	if r.mayActive {
		val = "1\n"
	}
	if err := writeStateFile(r.cfg.StateDir, ActiveFile, val); err != nil {
		r.log.Error("keep the active record", "mayBeActive", r.mayActive, "error", err)
	}
}

// MayBeActive tells whether this process's record says mysqld may have been
// made writable as the active site: what a restarted process starts from.
func (r *Runner) MayBeActive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mayActive
}
