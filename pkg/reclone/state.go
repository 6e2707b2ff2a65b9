package reclone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// stateFile is the Executor's record of the reclone it carries out, in Dir.
const stateFile = "reclone.json"

// state is how far the site's reclone has come. Each field is recorded
// before the next step may run, so a restarted sidecar resumes there.
type state struct {
	ID            string    `json:"id"`
	Accepted      time.Time `json:"accepted,omitempty"`
	DivergentGtid string    `json:"divergentGtid,omitempty"`
	// PreservedAt is the folder the site's earlier data goes to, chosen
	// once per reclone.
	PreservedAt string `json:"preservedAt,omitempty"`
	// Preserved: mysqld fenced, replication stopped, the set recorded.
	Preserved bool `json:"preserved,omitempty"`
	// Moving: the datadir's move into PreservedAt began; Moved: it ended.
	Moving bool `json:"moving,omitempty"`
	Moved  bool `json:"moved,omitempty"`
	// Position is the backup's GTID position; Seeded: mysqld runs on the
	// clone with gtid_slave_pos set to it.
	Position string `json:"position,omitempty"`
	Seeded   bool   `json:"seeded,omitempty"`
	// BinlogState is the clone's gtid_binlog_state seeded with Position:
	// the donor's history of other servers (gtid.CloneState); empty seeds
	// Position alone.
	BinlogState string `json:"binlogState,omitempty"`
	// Attempts counts the current phase's failed attempts in a row;
	// LastError is the latest; Failed ends the reclone on this site.
	Attempts  int    `json:"attempts,omitempty"`
	LastError string `json:"lastError,omitempty"`
	Failed    string `json:"failed,omitempty"`
	// Earlier are the reclones this site carried out before, newest last
	// (at most maxEarlier): their IDs are never taken again, and where
	// their data went stays on record.
	Earlier []earlier `json:"earlier,omitempty"`
}

// earlier is a reclone the site carried out before the one on record.
type earlier struct {
	ID          string `json:"id"`
	PreservedAt string `json:"preservedAt,omitempty"`
}

// maxEarlier bounds the history kept in the state.
const maxEarlier = 64

// seen reports whether id is an earlier reclone's.
func (st state) seen(id string) bool {
	for _, x := range st.Earlier {
		if x.ID == id {
			return true
		}
	}
	return false
}

func (e *Executor) statePath() string { return filepath.Join(e.Dir, stateFile) }

// load reads the state; none recorded is the zero state.
func (e *Executor) load() (state, error) {
	var st state
	b, err := os.ReadFile(e.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reclone: read state: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reclone: state %s unreadable: %w", e.statePath(), err)
	}
	return st, nil
}

// save writes the state atomically (a new file renamed over the old one,
// synced, so a crash leaves the old or the new record, never half of one).
func (e *Executor) save(st state) error {
	if err := os.MkdirAll(e.Dir, 0o700); err != nil {
		return fmt.Errorf("reclone: state folder: %w", err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("reclone: encode state: %w", err)
	}
	tmp := e.statePath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("reclone: write state: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("reclone: write state: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("reclone: sync state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("reclone: write state: %w", err)
	}
	if err := os.Rename(tmp, e.statePath()); err != nil {
		return fmt.Errorf("reclone: write state: %w", err)
	}
	return nil
}
