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
// 19134, 30972, 45025, 50470, 300264). The operator makes a site writable
// after it served the site's sidecar a view naming it, and usually after
// hearing the sidecar adopt it, so that adoption (or a writable read) is
// what a new process must know of. The ActiveFile records it: written, durably,
// before the adopted view can be seen by anyone (the report echoing it or
// /peer/active-site), also set by any read that finds mysqld writable, and
// cleared once mysqld was seen read-only, or fenced, under a view naming
// another site. A process that boots with it
// set fences before it reads, as the wake-up rule does (wake.go). For a
// primary that costs nothing: its boot fences a writable mysqld anyway.

// ActiveFile is the file, in Config.StateDir, holding "1" while mysqld may
// have been made writable as the active site (above).
const ActiveFile = "bloodraven-sidecar-active"

// readActive reads the record in dir. An unreadable or malformed record
// counts as set, and so does a missing one next to a floor file: that
// predecessor ran a version that kept no record. With neither file the Pod
// is new, and its mysqld starts read-only.
func readActive(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, ActiveFile))
	if errors.Is(err, fs.ErrNotExist) {
		_, ferr := os.Stat(filepath.Join(dir, FloorFile))
		return ferr == nil, nil
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
// db, read or fenced under it. It is set by a view naming this site and by
// any writable read (the operator does not always wait to hear a sidecar
// adopt a view before it makes mysqld writable); it is cleared by a
// read-only read or a fence under a view naming another site. The caller
// holds r.mu, so that a view naming this site is recorded before anyone
// can see it adopted. The file is written when it differs from the wanted
// value, and a failed write is tried again at the next call. It is not
// synced: a restarted container reads it back through the page cache, and
// after a node's crash mysqld starts read-only.
func (r *Runner) noteActive(db DBState) {
	v, held := r.loop.View()
	switch {
	case db == DBWritable || (held && v.ActiveSite == r.cfg.Site):
		r.mayActive = true
	case held && v.ActiveSite != r.cfg.Site && db == DBReadOnly:
		r.mayActive = false
	}
	want := activeFalse
	if r.mayActive {
		want = activeTrue
	}
	if r.cfg.StateDir == "" || r.activeOnDisk == want {
		return
	}
	if err := writeStateFile(r.cfg.StateDir, ActiveFile, string(want), false); err != nil {
		r.metrics.stateWriteErrors.Inc()
		r.log.Error("keep the active record", "mayBeActive", r.mayActive, "error", err)
		return
	}
	r.activeOnDisk = want
}

// activeContent is what the ActiveFile holds.
type activeContent string

// The ActiveFile's contents; activeUnknown when missing, unread or
// unreadable, so that the first call writes it.
const (
	activeUnknown activeContent = ""
	activeTrue    activeContent = "1\n"
	activeFalse   activeContent = "0\n"
)

// MayBeActive tells whether this process's record says mysqld may have been
// made writable as the active site: what a restarted process starts from.
func (r *Runner) MayBeActive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mayActive
}
