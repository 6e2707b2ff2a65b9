package load

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// Attempt is one write of one id by a writer or the prober.
type Attempt struct {
	ID     int64     `json:"id"`
	Writer string    `json:"writer"` // "w0", "w1", … or "probe"
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	OK     bool      `json:"ok"`             // the server acknowledged the commit
	Err    string    `json:"err,omitempty"`  // why not
	Addr   string    `json:"addr,omitempty"` // the address the connection went to
	Site   string    `json:"site,omitempty"` // the site that answered, when known
}

// Probe is one direct write attempt on one site by the prober.
type Probe = Attempt

// History is everything a run recorded.
type History struct {
	// Attempts are the writers' writes through the group's name or address.
	Attempts []Attempt `json:"attempts"`
	// Probes are the prober's direct writes to each site.
	Probes []Attempt `json:"probes"`
	// Final holds the ids read back from the final primary after the run.
	Final []int64 `json:"final"`
	// FinalSite is the site Final was read from; FinalRead says it was read.
	FinalSite string `json:"finalSite"`
	FinalRead bool   `json:"finalRead"`
	// Marks are named moments of the scenario (fault injected, healed…).
	Marks map[string]time.Time `json:"marks,omitempty"`
}

// Mark records a named moment.
func (h *History) Mark(name string, at time.Time) {
	if h.Marks == nil {
		h.Marks = map[string]time.Time{}
	}
	h.Marks[name] = at
}

// Save writes the history as JSON.
func (h *History) Save(path string) error {
	b, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return fmt.Errorf("encode history: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}

// LoadHistory reads a history saved by Save.
func LoadHistory(path string) (*History, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var h History
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("decode history %s: %w", path, err)
	}
	return &h, nil
}

// sortByStart orders attempts by start time, then id, in place.
func sortByStart(a []Attempt) {
	sort.SliceStable(a, func(i, j int) bool {
		if !a[i].Start.Equal(a[j].Start) {
			return a[i].Start.Before(a[j].Start)
		}
		return a[i].ID < a[j].ID
	})
}
