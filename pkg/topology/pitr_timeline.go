package topology

import (
	"cmp"
	"slices"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Promotion is one entry of a group's timeline: at Generation, the
// server ToServer (of site To) was made the group's writer while holding
// Position (its binlog position per domain when promoted). From then on,
// until a later promotion, it alone wrote: in every domain, a transaction
// past Position was written by ToServer, or it is one of the writes an
// old primary made after losing the role, which no later primary holds.
type Promotion struct {
	Generation int64
	To         string
	ToServer   uint32
	Position   gtid.Pos
}

// writerOf is the server the timeline says wrote seq in domain: the
// promoted server of the latest promotion (by generation) whose position
// in domain is below seq. ok is false before the first promotion that
// says anything: the history before it is not on record, and is trusted.
func writerOf(timeline []Promotion, domain uint32, seq uint64) (server uint32, ok bool) {
	var best *Promotion
	for i := range timeline {
		p := &timeline[i]
		if p.Position.Seq(domain) >= seq {
			continue
		}
		if best == nil || p.Generation > best.Generation {
			best = p
		}
	}
	if best == nil {
		return 0, false
	}
	return best.ToServer, true
}

// firstForeign is the first seq of run r whose writer, by the timeline, is
// another server than the run's; ok is false when every seq agrees. The
// writer changes only at promotion positions, so each stretch between two
// of them is judged by its first seq.
func firstForeign(timeline []Promotion, r GTIDRun) (uint64, bool) {
	starts := []uint64{r.From}
	for _, p := range timeline {
		if s := p.Position.Seq(r.Domain) + 1; s > r.From && s <= r.To {
			starts = append(starts, s)
		}
	}
	slices.Sort(starts)
	for _, s := range slices.Compact(starts) {
		if w, ok := writerOf(timeline, r.Domain, s); ok && w != r.Server {
			return s, true
		}
	}
	return 0, false
}

// CutAtDivergence keeps of f only what precedes its first transaction
// that the timeline says another server wrote: from there on the file
// holds an old primary's writes that the group lost in a failover. A cut
// file is marked (Cut), its End is the position after the last kept
// transaction, and its times no longer bound what it holds: a plan never
// stops inside it on time, and never takes its times for the window's.
func CutAtDivergence(f ArchivedBinlog, timeline []Promotion) ArchivedBinlog {
	for i, r := range f.Runs {
		seq, foreign := firstForeign(timeline, r)
		if !foreign {
			continue
		}
		kept := slices.Clone(f.Runs[:i])
		if seq > r.From {
			part := r
			part.To = seq - 1
			kept = append(kept, part)
		}
		f.Runs = kept
		f.End = runsEnd(f.Start, kept)
		f.Cut = true
		return f
	}
	return f
}

// runsEnd is the position start reaches once runs are applied.
func runsEnd(start gtid.Pos, runs []GTIDRun) gtid.Pos {
	end := slices.Clone(start)
	for _, r := range runs {
		end = MaxPos(end, gtid.Pos{{Domain: r.Domain, Server: r.Server, Seq: r.To}})
	}
	slices.SortFunc(end, func(x, y gtid.GTID) int { return cmp.Compare(x.Domain, y.Domain) })
	return end
}
