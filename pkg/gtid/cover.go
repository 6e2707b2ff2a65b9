package gtid

// Cover is the history that s vouches for. A MySQL uuid's intervals are
// exact, so they stay as they are. A MariaDB domain-server id instead covers
// every seq from 1 to its highest one: under gtid_strict_mode a domain's
// history is gap-free, and which server wrote which seq is a guess of
// BinlogState.Set that changes when a server writes again (a failback), so
// only each server's last seq is a fact. Comparing with Cover is
// BinlogErrant's rule: want.Subtract(Cover(have)) is what have lacks.
func Cover(s Set) Set {
	out := Set{srcs: make([]source, len(s.srcs))}
	for i, src := range s.srcs {
		out.srcs[i] = src
		if src.id.maria {
			out.srcs[i].ivs = []Interval{{1, src.ivs[len(src.ivs)-1].End}}
		}
	}
	return out
}

// Lacks returns the transactions of want that have does not hold. A MySQL
// uuid's intervals compare exactly. A MariaDB domain is, under
// gtid_strict_mode, one linear history on each server: have and want agree
// up to their fork, the highest seq at which both hold the same GTID, and
// have lacks exactly want's seqs above it. By Cover's rule (a server's GTID
// is in every history that holds its later ones) the fork is, over the
// servers both hold, the highest of the lower of their two last seqs. The
// seqs above it are named as BinlogState.Set names them: which server wrote
// which seq is its guess, so a plain Subtract would also count seqs have
// holds under another server's name.
func Lacks(have, want Set) Set {
	out := want.Subtract(Cover(have))
	forks := map[uint32]uint64{}
	for _, w := range want.srcs {
		if h, ok := have.source(w.id); ok && w.id.maria {
			fork := min(w.ivs[len(w.ivs)-1].End, h.ivs[len(h.ivs)-1].End)
			forks[w.id.domain] = max(forks[w.id.domain], fork)
		}
	}
	if len(forks) == 0 {
		return out
	}
	bld := builder{}
	for _, src := range out.srcs {
		var fork uint64
		if src.id.maria {
			fork = forks[src.id.domain]
		}
		for _, iv := range src.ivs {
			if iv.End > fork {
				bld.add(src.id, Interval{max(iv.Start, fork+1), iv.End})
			}
		}
	}
	return bld.set()
}

// source returns s's runs of one source id.
func (s Set) source(id sourceID) (source, bool) {
	for _, src := range s.srcs {
		if src.id == id {
			return src, true
		}
	}
	return source{}, false
}

// Intersect returns the transactions in both s and o.
func (s Set) Intersect(o Set) Set { return s.Subtract(s.Subtract(o)) }

// Only returns the transactions of s written under source id (a uuid or a
// MariaDB "domain-server", as Sources spells them); empty when id is "".
func (s Set) Only(id string) Set {
	for _, src := range s.srcs {
		if id != "" && src.id.String() == id {
			return Set{srcs: []source{src}}
		}
	}
	return Set{}
}

// Without returns s without the transactions written under source id.
func (s Set) Without(id string) Set { return s.Subtract(s.Only(id)) }
