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
//
// have and want are whole executed sets: the fork is checked against both
// (checkedFork). For a piece of a history (what a set holds of a lost set)
// use LacksPart.
func Lacks(have, want Set) Set { return lacks(have, want, true) }

// LacksPart is Lacks for want a piece of a history rather than a server's
// whole executed set: the fork is not checked, as a piece holds only some
// of the servers a whole history names.
func LacksPart(have, want Set) Set { return lacks(have, want, false) }

func lacks(have, want Set, check bool) Set {
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
	if check {
		for d, f := range forks {
			forks[d] = checkedFork(have, want, d, f)
		}
	}
	// Above a fork lowered by checkedFork, Cover's rule no longer holds
	// (one server's name stands for two branches): want's seqs above it
	// are lacking whatever have calls them.
	for _, w := range want.srcs {
		if f, ok := forks[w.id.domain]; ok && w.id.maria {
			for _, iv := range w.ivs {
				if iv.End > f {
					out = out.Union(Set{srcs: []source{{id: w.id, ivs: []Interval{{max(iv.Start, f+1), iv.End}}}}})
				}
			}
		}
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

// checkedFork lowers a MariaDB domain's fork f until both sides agree on
// every server they hold at or below it: a server one side holds with its
// last seq at or below the fork must be held by the other at least as far.
// Without it, a server that wrote the same seqs twice (its names reused
// after a reclone or a restore) makes two different histories look like
// one: y at {0-2-153, 0-1-160} and r at {0-1-167} share server 1 up to 160,
// yet r never held server 2's 153. Where no seq is reused the fork passes
// unchanged.
func checkedFork(have, want Set, domain uint32, f uint64) uint64 {
	last := func(s Set) map[uint32]uint64 {
		m := map[uint32]uint64{}
		for _, src := range s.srcs {
			if src.id.maria && src.id.domain == domain {
				m[src.id.server] = src.ivs[len(src.ivs)-1].End
			}
		}
		return m
	}
	h, w := last(have), last(want)
	for lowered := true; lowered && f > 0; {
		lowered = false
		for _, pair := range [][2]map[uint32]uint64{{h, w}, {w, h}} {
			for server, seq := range pair[0] {
				if other := pair[1][server]; seq <= f && other < seq {
					f, lowered = seq-1, true
				}
			}
		}
	}
	return f
}

// ReceivedUnapplied is what a replica's IO thread received (received: a
// piece of a history, MySQL's Retrieved_Gtid_Set or MariaDB's Gtid_IO_Pos,
// one GTID per domain) that its executed set lacks, one entry per
// transaction. A MySQL set names each transaction. A MariaDB received GTID
// d-s-n stands for every seq of domain d up to n, so what executed lacks
// of it is d-s:f+1-n, f the highest seq executed holds in the domain: the
// count is exact (a domain's seqs are gap-free under gtid_strict_mode),
// and which server wrote each seq is a guess, as BinlogState.Set's is.
// LacksPart would name only the received position, counting one.
func ReceivedUnapplied(executed, received Set) Set {
	top := map[uint32]uint64{}
	for _, h := range executed.srcs {
		if h.id.maria {
			top[h.id.domain] = max(top[h.id.domain], h.ivs[len(h.ivs)-1].End)
		}
	}
	var exact Set
	maria := builder{}
	for _, w := range received.srcs {
		if !w.id.maria {
			exact.srcs = append(exact.srcs, w)
			continue
		}
		if n, f := w.ivs[len(w.ivs)-1].End, top[w.id.domain]; n > f {
			maria.add(w.id, Interval{f + 1, n})
		}
	}
	return LacksPart(executed, exact).Union(maria.set())
}
