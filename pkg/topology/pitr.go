package topology

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// ArchivedBinlog describes one sealed binlog file in the archive.
type ArchivedBinlog struct {
	Site, File string
	// Start is the GTID state before the file's first event (its
	// Gtid_list); End the state after its last.
	Start, End gtid.Pos
	// FirstGTID is the first GTID of each domain the file has events of.
	FirstGTID gtid.Pos
	// First and Last are its first and last transactions' times (each
	// the time its GTID event was written: the commit); Max the latest
	// time of any event in it. Times are not monotonic within a file.
	First, Last, Max time.Time
}

// PITRWindow is what an archive can restore to from one base backup.
type PITRWindow struct {
	// From is the earliest target: the base backup's stop time.
	From time.Time
	// To is the last archived event's time: a later target is refused,
	// since events after it may exist that the archive lacks yet.
	To time.Time
}

// PITRPlan is the files to replay, in order, from the base backup's
// position up to a target time.
type PITRPlan struct {
	Files  []ArchivedBinlog
	Window PITRWindow
}

// PlanPITR chooses the archived files that carry a base backup, consistent
// at position base and taken until baseStop, forward to target. Files of
// several sites may overlap (a new primary's binlog repeats what it had
// replicated): each step takes, among the files that start at or before
// the state reached and end past it, the one that ends furthest. A target
// outside the window, or a gap in the chain before it, is refused before
// anything is restored.
func PlanPITR(files []ArchivedBinlog, base gtid.Pos, baseStop, target time.Time) (PITRPlan, error) {
	plan := PITRPlan{Window: PITRWindow{From: baseStop}}
	state := slices.Clone(base)
	for {
		next, ok := nextArchived(files, state)
		if !ok {
			break
		}
		plan.Files = append(plan.Files, next)
		state = MaxPos(state, next.End)
		if next.Last.After(plan.Window.To) {
			plan.Window.To = next.Last
		}
		if !next.Last.Before(target) {
			break // replay stops inside this file
		}
	}
	switch {
	case target.Before(plan.Window.From):
		return plan, fmt.Errorf("%w: target %s is before the base backup ended (%s)", ErrOutsideWindow,
			stamp(target), stamp(baseStop))
	case !target.After(plan.Window.To):
		return plan, nil
	case gapAfter(files, state):
		return plan, fmt.Errorf("%w: no archived file continues from %s", ErrArchiveGap, state)
	case plan.Window.To.IsZero():
		return plan, fmt.Errorf("%w: target %s, and nothing is archived after the base backup", ErrOutsideWindow,
			stamp(target))
	default:
		return plan, fmt.Errorf("%w: target %s is after the last archived event (%s)", ErrOutsideWindow,
			stamp(target), stamp(plan.Window.To))
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nextArchived is the file that carries state furthest: it starts at or
// before state and ends past it.
func nextArchived(files []ArchivedBinlog, state gtid.Pos) (ArchivedBinlog, bool) {
	var best ArchivedBinlog
	found := false
	for _, f := range files {
		if !state.HasReached(f.Start) || state.HasReached(f.End) {
			continue
		}
		if !found || cmpPos(f.End, best.End) > 0 || (cmpPos(f.End, best.End) == 0 && f.Site+f.File < best.Site+best.File) {
			best, found = f, true
		}
	}
	return best, found
}

// gapAfter tells whether some file ends past state without being reachable
// from it: the archive lacks the file in between.
func gapAfter(files []ArchivedBinlog, state gtid.Pos) bool {
	for _, f := range files {
		if !state.HasReached(f.End) && !state.HasReached(f.Start) {
			return true
		}
	}
	return false
}

// MaxPos is the per-domain furthest of a and b.
func MaxPos(a, b gtid.Pos) gtid.Pos {
	out := slices.Clone(a)
	for _, g := range b {
		i := slices.IndexFunc(out, func(o gtid.GTID) bool { return o.Domain == g.Domain })
		switch {
		case i < 0:
			out = append(out, g)
		case out[i].Seq < g.Seq:
			out[i] = g
		}
	}
	slices.SortFunc(out, func(x, y gtid.GTID) int { return cmp.Compare(x.Domain, y.Domain) })
	return out
}

// cmpPos orders positions by the sum of their sequence numbers: enough to
// pick the furthest of files that all start within the state reached.
func cmpPos(a, b gtid.Pos) int {
	var sa, sb uint64
	for _, g := range a {
		sa += g.Seq
	}
	for _, g := range b {
		sb += g.Seq
	}
	return cmp.Compare(sa, sb)
}
