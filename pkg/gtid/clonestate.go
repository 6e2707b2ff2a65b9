package gtid

import "fmt"

// CloneState is the binlog state a MariaDB clone taken at pos should start
// with, given donor, the donor's executed set (from its binlog state, as
// Set derives it) observed before the backup: per domain of pos, every
// (domain, server) pair of donor whose last seq is below pos's, then pos.
// Seeding only pos would make the clone's derived set attribute the whole
// domain to pos's server, so it would never be seen to hold another
// server's range the group's history has (and would look errant for it).
// A pair whose last seq is past pos (a server that wrote again after the
// backup) is left out: its earlier range is not known.
func CloneState(donor Set, pos Pos) (BinlogState, error) {
	var out BinlogState
	for _, src := range donor.Sources() {
		var d, s uint32
		if _, err := fmt.Sscanf(src, "%d-%d", &d, &s); err != nil {
			return nil, fmt.Errorf("%w: source id %q", ErrNotMariaDB, src)
		}
		ivs := donor.Intervals(src)
		last := ivs[len(ivs)-1].End
		if p, ok := pos.Domain(d); ok && last < p.Seq && s != p.Server {
			out = append(out, GTID{Domain: d, Server: s, Seq: last})
		}
	}
	out = append(out, pos...)
	return ParseBinlogState(BinlogState(out).String())
}
