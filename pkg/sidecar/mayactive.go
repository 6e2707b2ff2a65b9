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

// noteActive keeps the wanted record in step with the view held and
// mysqld's state db, read or fenced under it. It is set by a view naming
// this site and by any writable read (the operator does not always wait to
// hear a sidecar adopt a view before it makes mysqld writable); it is
// cleared by a read-only read or a fence under a view naming another site.
// The caller holds r.mu. The file follows in syncActive, outside r.mu and
// without waiting for activeMu: a stalled disk must not hold up the lease
// watch, a fence or its escalation.
func (r *Runner) noteActive(db DBState) {
	v, held := r.loop.View()
	switch {
	case db == DBWritable || (held && v.ActiveSite == r.cfg.Site):
		r.mayActive = true
	case held && v.ActiveSite != r.cfg.Site && db == DBReadOnly:
		r.mayActive = false
	}
}

// syncActive writes the record when the file differs from what is wanted.
// It holds activeMu, never r.mu, while it writes; a failed write is
// counted, logged and tried again at the next call. It never waits for
// activeMu: a caller finding it held (a write under way, perhaps stalled
// on the state directory's disk) returns at once, so that a stalled disk
// holds up neither a fence nor its escalation (fenceOnce, readDB). What
// it wanted is then written by the holder: syncActive looks again at what
// is wanted after every write and after it lets activeMu go, and
// recordFirst only ever sets the record, the safe side (a record left set
// costs a fence at boot). The file is not synced: a restarted container
// reads it back through the page cache, and after a node's crash mysqld
// starts read-only.
func (r *Runner) syncActive() {
	if r.cfg.StateDir == "" {
		return
	}
	for r.activeMu.TryLock() {
		ok := r.writeWanted()
		r.activeMu.Unlock()
		// A caller that found activeMu held meanwhile changed what is
		// wanted before it tried: looked at here, after the unlock.
		if _, differs := r.activeWant(); !ok || !differs {
			return
		}
	}
}

// writeWanted writes what is wanted until the file holds it; false when a
// write failed. The caller holds activeMu.
func (r *Runner) writeWanted() bool {
	for {
		want, differs := r.activeWant()
		if !differs {
			return true
		}
		if !r.writeActive(want) {
			return false
		}
	}
}

// activeWant is what the record should hold, and whether the file differs.
func (r *Runner) activeWant() (activeContent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := activeFalse
	if r.mayActive {
		want = activeTrue
	}
	return want, r.activeOnDisk != want
}

// writeActive writes want; the caller holds activeMu.
func (r *Runner) writeActive(want activeContent) bool {
	if err := writeStateFile(r.cfg.StateDir, ActiveFile, string(want), false); err != nil {
		r.metrics.stateWriteErrors.Inc()
		r.log.Error("keep the active record", "want", strings.TrimSpace(string(want)), "error", err)
		return false
	}
	r.mu.Lock()
	r.activeOnDisk = want
	r.mu.Unlock()
	return true
}

// errRecordUnwritten: a reply naming this site was set aside because the
// active record could not be written first.
var errRecordUnwritten = errors.New("view naming this site set aside: the active record could not be written")

// recordFirst makes sure the record is set on disk before any of replies,
// which name this site active, can be adopted: it returns them with each
// such reply set aside (ReplyNone) when the write failed, and with
// activeMu held, so that no clearing write runs until the caller, having
// adopted under r.mu, calls the returned unlock. A view naming this site
// is thus never adopted, relayed or echoed with the record clear on disk.
// Replies none of which names this site take no lock at all.
func (r *Runner) recordFirst(replies ...*Reply) (unlock func()) {
	names := false
	for _, rep := range replies {
		names = names || (rep.Kind == ReplyView && rep.View.ActiveSite == r.cfg.Site)
	}
	if !names || r.cfg.StateDir == "" {
		// Nothing to guard: a view naming another site (the one that
		// fences this site) never waits for a record write.
		return func() {}
	}
	r.activeMu.Lock()
	r.mu.Lock()
	r.mayActive = true
	onDisk := r.activeOnDisk == activeTrue
	r.mu.Unlock()
	if onDisk || r.writeActive(activeTrue) {
		return r.activeMu.Unlock
	}
	for _, rep := range replies {
		if rep.Kind == ReplyView && rep.View.ActiveSite == r.cfg.Site {
			*rep = Reply{Kind: ReplyNone, Err: errRecordUnwritten}
		}
	}
	return r.activeMu.Unlock
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
	if r.cfg.StateDir != "" {
		return r.activeOnDisk != activeFalse // unknown counts as set
	}
	return r.mayActive
}
