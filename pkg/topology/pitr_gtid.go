package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// PlanPITRToGTID chooses the archived files that carry a base backup,
// consistent at position base, up to the transaction target: just before
// it, or through it (inclusive). The chain follows PlanPITR's rules (the
// timeline's cuts, agreement between sites) and ends in the file that
// holds target among the transactions it may replay. It refuses, before
// anything is restored: a base already past the target
// (ErrOutsideWindow); a target the timeline says the group lost, or one
// the archive's history passes without holding it (ErrOutsideWindow); a
// missing file before it (ErrArchiveGap).
func PlanPITRToGTID(files []ArchivedBinlog, timeline []Promotion, base gtid.Pos, target gtid.GTID,
	inclusive bool) (PITRPlan, error) {
	plan := PITRPlan{Target: PITRTarget{GTID: &target, Inclusive: inclusive}}
	if at, ok := base.Domain(target.Domain); ok {
		switch {
		case inclusive && at.Seq == target.Seq && at.Server == target.Server:
			return plan, nil // the backup ends on the target
		case !inclusive && at.Seq+1 == target.Seq:
			return plan, nil // the backup ends just before it
		case at.Seq >= target.Seq:
			return plan, fmt.Errorf("%w: the base backup, at %s, is already past %s", ErrOutsideWindow, base,
				plan.Target)
		}
	}
	whole, files := files, cutAll(files, timeline)
	state, err := plan.chain(files, base, func(f ArchivedBinlog) bool {
		return f.End.Seq(target.Domain) >= target.Seq
	})
	if err != nil {
		return plan, err
	}
	if n := len(plan.Files); n > 0 && plan.Files[n-1].Holds(target) {
		return plan, nil
	}
	for i, f := range whole {
		if f.Holds(target) && !files[i].Holds(target) {
			return plan, fmt.Errorf("%w: %s is in %s/%s only among the writes the timeline says the group lost",
				ErrOutsideWindow, target, f.Site, f.File)
		}
	}
	if state.Seq(target.Domain) >= target.Seq {
		return plan, fmt.Errorf("%w: the archive's history reaches %s without holding %s", ErrOutsideWindow, state,
			target)
	}
	if err := gapErr(whole, files, state); err != nil {
		return plan, err
	}
	return plan, fmt.Errorf("%w: %s is not archived (the archive ends at %s)", ErrOutsideWindow, target, state)
}

// Holds tells whether g is among the transactions f may replay.
func (f ArchivedBinlog) Holds(g gtid.GTID) bool {
	s, ok := serverAt(f.Runs, g.Domain, g.Seq)
	return ok && s == g.Server
}

// PITRCoverage is the window a base backup, consistent at base and taken
// until baseStop, can be restored to with the archive as it is: from
// baseStop to the latest event of the files that carry it on, by the
// rules PlanPITR follows. An archive that is ambiguous from base is an
// error (ErrArchiveAmbiguous); a window whose To is before From is empty.
func PITRCoverage(files []ArchivedBinlog, timeline []Promotion, base gtid.Pos, baseStop time.Time) (PITRWindow, error) {
	plan := PITRPlan{Window: PITRWindow{From: baseStop}}
	_, err := plan.chain(cutAll(files, timeline), base, func(ArchivedBinlog) bool { return false })
	return plan.Window, err
}
