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
	// Runs are its transactions' GTIDs in file order, as runs of one
	// domain and server with consecutive seqs.
	Runs []GTIDRun
	// First and Last are its first and last transactions' times (each
	// the time its GTID event was written: the commit); Max the latest
	// time of any event in it. Times are not monotonic within a file.
	First, Last, Max time.Time
	// Cut is set on a file CutAtDivergence shortened: it is replayed
	// only up to End, and its times say nothing about that point.
	Cut bool
}

// GTIDRun is the GTIDs Domain-Server-From through Domain-Server-To.
type GTIDRun struct {
	Domain uint32 `json:"domain"`
	Server uint32 `json:"server"`
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
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
	Target PITRTarget
}

// PITRTarget is where a replay stops: at the first event at or after
// Time (whole seconds), or, when GTID is set, just before or (Inclusive)
// just after that transaction.
type PITRTarget struct {
	Time      time.Time
	GTID      *gtid.GTID
	Inclusive bool
}

func (t PITRTarget) String() string {
	switch {
	case t.GTID == nil:
		return stamp(t.Time)
	case t.Inclusive:
		return "through " + t.GTID.String()
	default:
		return "before " + t.GTID.String()
	}
}

// PlanPITR chooses the archived files that carry a base backup, consistent
// at position base and taken until baseStop, forward to target. Each file
// is first cut at the first transaction the group's timeline says its
// server did not write (CutAtDivergence): an old primary's writes after
// it lost the role are never replayed. A file
// continues the chain from the state reached when, for each domain it has
// transactions in, its first seq is at most one past the state's, its
// Gtid_list is within the state, and it ends past the state. Files of
// several sites may overlap (a new primary's binlog repeats what it had
// replicated); where they could both continue, or where the chosen file
// overlaps another site's file beyond the state, they must hold the same
// GTIDs (same server ids) there, else the plan is refused
// (ErrArchiveAmbiguous): one of them diverged, and which one is not
// something the archive alone can tell. The chain stops at the first file
// whose latest event time is at or after target (times are not monotonic
// within a file). A target outside the window, or a gap before it, is
// refused before anything is restored.
func PlanPITR(files []ArchivedBinlog, timeline []Promotion, base gtid.Pos, baseStop, target time.Time) (PITRPlan, error) {
	plan := PITRPlan{Window: PITRWindow{From: baseStop}, Target: PITRTarget{Time: target}}
	whole, files := files, cutAll(files, timeline)
	state, err := plan.chain(files, base, func(f ArchivedBinlog) bool { return !f.latest().Before(target) })
	if err != nil {
		return plan, err
	}
	switch {
	case target.Before(plan.Window.From):
		return plan, fmt.Errorf("%w: target %s is before the base backup ended (%s)", ErrOutsideWindow,
			stamp(target), stamp(baseStop))
	case !target.After(plan.Window.To):
		return plan, nil
	}
	if err := gapErr(whole, files, state); err != nil {
		return plan, err
	}
	switch {
	case plan.Window.To.IsZero():
		return plan, fmt.Errorf("%w: target %s, and nothing is archived after the base backup", ErrOutsideWindow,
			stamp(target))
	default:
		return plan, fmt.Errorf("%w: target %s is after the last archived event (%s)", ErrOutsideWindow,
			stamp(target), stamp(plan.Window.To))
	}
}

// cutAll is every file cut at its divergence by the timeline.
func cutAll(files []ArchivedBinlog, timeline []Promotion) []ArchivedBinlog {
	out := make([]ArchivedBinlog, len(files))
	for i, f := range files {
		out[i] = CutAtDivergence(f, timeline)
	}
	return out
}

// chain appends to the plan the files that carry base on, each checked
// against the other sites' files, until stop says the target is met in
// the last one or nothing continues; it returns the state reached.
func (plan *PITRPlan) chain(files []ArchivedBinlog, base gtid.Pos, stop func(ArchivedBinlog) bool) (gtid.Pos, error) {
	state := slices.Clone(base)
	for {
		next, ok, err := nextArchived(files, state)
		if err != nil || !ok {
			return state, err
		}
		if err := agreesWithOthers(files, next, state); err != nil {
			return state, err
		}
		plan.Files = append(plan.Files, next)
		state = MaxPos(state, next.End)
		if latest := next.latest(); latest.After(plan.Window.To) {
			plan.Window.To = latest
		}
		if stop(next) {
			return state, nil // replay stops inside this file
		}
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// latest is the file's latest event time; none for a cut file.
func (f ArchivedBinlog) latest() time.Time {
	if f.Cut {
		return time.Time{}
	}
	if f.Max.Before(f.Last) {
		return f.Last
	}
	return f.Max
}

// continues tells whether f carries state on with no GTID skipped, and
// from the same history: where f holds (or its Gtid_list names) the seq
// state last reached in a domain, it is the same transaction, by server.
func (f ArchivedBinlog) continues(state gtid.Pos) bool {
	if len(f.Runs) == 0 || state.HasReached(f.End) || !state.HasReached(f.Start) || !f.sameHistory(state) {
		return false
	}
	seen := map[uint32]bool{}
	for _, r := range f.Runs {
		if seen[r.Domain] {
			continue
		}
		seen[r.Domain] = true
		if r.From > state.Seq(r.Domain)+1 {
			return false
		}
	}
	return true
}

// sameHistory tells whether f agrees with state on each domain's last
// transaction: a file that holds another server's transaction at that seq
// belongs to another history (an old primary's lost writes on one side),
// and a replay from state would skip it by seq alone.
func (f ArchivedBinlog) sameHistory(state gtid.Pos) bool {
	for _, g := range state {
		if g.Seq == 0 {
			continue
		}
		if s, ok := serverAt(f.Runs, g.Domain, g.Seq); ok && s != g.Server {
			return false
		}
		if st, ok := f.Start.Domain(g.Domain); ok && st.Seq == g.Seq && st.Server != g.Server {
			return false
		}
	}
	return true
}

// serverAt is the server of domain's seq in runs, if they hold it.
func serverAt(runs []GTIDRun, domain uint32, seq uint64) (uint32, bool) {
	for _, r := range runs {
		if r.Domain == domain && r.From <= seq && seq <= r.To {
			return r.Server, true
		}
	}
	return 0, false
}

// nextArchived is the file that carries state furthest. Candidates of
// several sites must agree, and one must end at or past all the others.
func nextArchived(files []ArchivedBinlog, state gtid.Pos) (ArchivedBinlog, bool, error) {
	var cands []ArchivedBinlog
	for _, f := range files {
		if f.continues(state) {
			cands = append(cands, f)
		}
	}
	if len(cands) == 0 {
		for _, f := range files {
			if !state.HasReached(f.End) && !f.sameHistory(state) {
				return ArchivedBinlog{}, false, fmt.Errorf("%w: %s/%s holds other transactions than the ones %s "+
					"ends on: the base or a file before belongs to another history", ErrArchiveAmbiguous, f.Site,
					f.File, state)
			}
		}
		return ArchivedBinlog{}, false, nil
	}
	slices.SortFunc(cands, func(a, b ArchivedBinlog) int { return cmp.Compare(a.Site+"/"+a.File, b.Site+"/"+b.File) })
	for i, a := range cands {
		for _, b := range cands[i+1:] {
			if !runsAgree(a.Runs, b.Runs, state) {
				return ArchivedBinlog{}, false, fmt.Errorf("%w: %s/%s and %s/%s both continue from %s with different transactions",
					ErrArchiveAmbiguous, a.Site, a.File, b.Site, b.File, state)
			}
		}
	}
	for _, a := range cands {
		if slices.IndexFunc(cands, func(b ArchivedBinlog) bool { return !a.End.HasReached(b.End) }) < 0 {
			return a, true, nil
		}
	}
	return ArchivedBinlog{}, false, fmt.Errorf("%w: no file continuing from %s ends past all the others", ErrArchiveAmbiguous, state)
}

// agreesWithOthers refuses next when another file (of any site: one site
// may hold two histories, before and after its data was replaced) holds
// other transactions than next in the seqs next would replay.
func agreesWithOthers(files []ArchivedBinlog, next ArchivedBinlog, state gtid.Pos) error {
	for _, f := range files {
		if (f.Site != next.Site || f.File != next.File) && !runsAgree(f.Runs, next.Runs, state) {
			return fmt.Errorf("%w: %s/%s and %s/%s hold different transactions after %s", ErrArchiveAmbiguous,
				next.Site, next.File, f.Site, f.File, state)
		}
	}
	return nil
}

// runsAgree tells whether a and b hold the same GTIDs in every domain,
// over the seqs both cover, past state.
func runsAgree(a, b []GTIDRun, state gtid.Pos) bool {
	domains := map[uint32]bool{}
	for _, r := range a {
		domains[r.Domain] = true
	}
	for d := range domains {
		lo, hi := span(a, d)
		blo, bhi := span(b, d)
		lo, hi = max(lo, blo, state.Seq(d)+1), min(hi, bhi)
		if lo > hi {
			continue
		}
		if !slices.Equal(clip(a, d, lo, hi), clip(b, d, lo, hi)) {
			return false
		}
	}
	return true
}

// span is the lowest and highest seq of domain d in runs (1, 0 if none).
func span(runs []GTIDRun, d uint32) (uint64, uint64) {
	lo, hi, found := uint64(1), uint64(0), false
	for _, r := range runs {
		if r.Domain != d {
			continue
		}
		if !found || r.From < lo {
			lo = r.From
		}
		if !found || r.To > hi {
			hi = r.To
		}
		found = true
	}
	return lo, hi
}

// clip is domain d's runs cut to lo..hi, adjacent runs of one server merged.
func clip(runs []GTIDRun, d uint32, lo, hi uint64) []GTIDRun {
	var out []GTIDRun
	for _, r := range runs {
		if r.Domain != d || r.To < lo || r.From > hi {
			continue
		}
		r.From, r.To = max(r.From, lo), min(r.To, hi)
		if n := len(out); n > 0 && out[n-1].Server == r.Server && out[n-1].To+1 == r.From {
			out[n-1].To = r.To
			continue
		}
		out = append(out, r)
	}
	return out
}

// gapAfter tells whether some file ends past state though none continues
// from it: the archive lacks the file in between.
func gapAfter(files []ArchivedBinlog, state gtid.Pos) bool {
	for _, f := range files {
		if !state.HasReached(f.End) {
			return true
		}
	}
	return false
}

// gapErr says why nothing carries state on when something should: only
// a file the timeline cut reaches past it (ErrArchiveGap naming it), or a
// file past it that nothing continues into (ErrArchiveGap); nil when no
// archived file reaches past state.
func gapErr(whole, cut []ArchivedBinlog, state gtid.Pos) error {
	if lost := lostAfter(whole, cut, state); lost != "" {
		return fmt.Errorf("%w: from %s the archive holds only %s, whose transactions past it the timeline "+
			"says were lost in a failover; the new writer's binlog is not archived yet", ErrArchiveGap, state, lost)
	}
	if gapAfter(cut, state) {
		return fmt.Errorf("%w: no archived file continues from %s", ErrArchiveGap, state)
	}
	return nil
}

// lostAfter names a file that was cut (cut[i] of whole[i]) and, whole,
// ends past state: the archive reaches past state only with lost writes.
func lostAfter(whole, cut []ArchivedBinlog, state gtid.Pos) string {
	for i, f := range cut {
		if f.Cut && !state.HasReached(whole[i].End) {
			return f.Site + "/" + f.File
		}
	}
	return ""
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
