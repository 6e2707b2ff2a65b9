package load

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Window is a stretch of time without any acknowledged write.
type Window struct {
	From     time.Time     `json:"from"` // end of the last ack before the gap
	To       time.Time     `json:"to"`   // end of the first ack after it
	Duration time.Duration `json:"duration"`
}

// Overlap is evidence that two sites accepted writes at the same time: a
// write acknowledged by Other committed while Site was certainly writable,
// between two of Site's acknowledged probes with no failed probe between them.
type Overlap struct {
	Site  string    `json:"site"`
	From  time.Time `json:"from"` // Site's certain writable span
	To    time.Time `json:"to"`
	Other string    `json:"other"`
	At    Attempt   `json:"at"` // the write Other acknowledged inside it
}

func (o Overlap) String() string {
	return fmt.Sprintf("%s writable from %s to %s, and %s acknowledged id %d (%s..%s)",
		o.Site, o.From.Format(tsFormat), o.To.Format(tsFormat), o.Other, o.At.ID,
		o.At.Start.Format(tsFormat), o.At.End.Format(tsFormat))
}

const tsFormat = "15:04:05.000"

// Report is what Check finds in a history.
type Report struct {
	Attempts, Acked, Failed int
	// Lost are acknowledged ids (writers' and probes') missing from the final primary.
	Lost []int64
	// LostBySite counts the lost ids by the site that acknowledged them.
	LostBySite map[string]int
	// Windows are the gaps between acknowledged writes longer than the threshold.
	Windows   []Window
	MaxWindow time.Duration
	// Overlaps are moments when two sites accepted writes.
	Overlaps []Overlap
	// FirstAck and LastAck are the first and last acknowledged write per site,
	// writers and probes together.
	FirstAck, LastAck map[string]Attempt
}

// Check reads a history. gap is the least length of a reported unavailability window.
func Check(h *History, gap time.Duration) Report {
	r := Report{LostBySite: map[string]int{}, FirstAck: map[string]Attempt{}, LastAck: map[string]Attempt{}}
	r.Attempts = len(h.Attempts)
	for _, a := range append(append([]Attempt(nil), h.Attempts...), h.Probes...) {
		if !a.OK {
			continue
		}
		if f, ok := r.FirstAck[a.Site]; !ok || a.End.Before(f.End) {
			r.FirstAck[a.Site] = a
		}
		if l, ok := r.LastAck[a.Site]; !ok || a.End.After(l.End) {
			r.LastAck[a.Site] = a
		}
	}
	for _, a := range h.Attempts {
		if a.OK {
			r.Acked++
		} else {
			r.Failed++
		}
	}
	r.Lost, r.LostBySite = lost(h)
	r.Windows = windows(h.Attempts, gap)
	for _, w := range r.Windows {
		r.MaxWindow = max(r.MaxWindow, w.Duration)
	}
	r.Overlaps = overlaps(h)
	return r
}

// lost lists the acknowledged ids that the final primary does not hold.
func lost(h *History) ([]int64, map[string]int) {
	by := map[string]int{}
	if !h.FinalRead {
		return nil, by
	}
	have := make(map[int64]bool, len(h.Final))
	for _, id := range h.Final {
		have[id] = true
	}
	var out []int64
	for _, a := range append(append([]Attempt(nil), h.Attempts...), h.Probes...) {
		if a.OK && !have[a.ID] {
			out = append(out, a.ID)
			by[a.Site]++
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, by
}

// windows finds the gaps longer than gap between consecutive acknowledgements,
// by the time each ack arrived.
func windows(attempts []Attempt, gap time.Duration) []Window {
	var ends []time.Time
	for _, a := range attempts {
		if a.OK {
			ends = append(ends, a.End)
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	var out []Window
	for i := 1; i < len(ends); i++ {
		if d := ends[i].Sub(ends[i-1]); d > gap {
			out = append(out, Window{From: ends[i-1], To: ends[i], Duration: d})
		}
	}
	return out
}

// Longest returns the longest window, or a zero Window.
func (r Report) Longest() Window {
	var w Window
	for _, x := range r.Windows {
		if x.Duration > w.Duration {
			w = x
		}
	}
	return w
}

// Summary is a short human account of the report.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d attempts, %d acknowledged, %d failed; %d acknowledged ids lost %v",
		r.Attempts, r.Acked, r.Failed, len(r.Lost), r.LostBySite)
	fmt.Fprintf(&b, "; %d unavailability windows, longest %s", len(r.Windows), r.MaxWindow.Round(time.Millisecond))
	fmt.Fprintf(&b, "; %d two-writer overlaps", len(r.Overlaps))
	return b.String()
}
