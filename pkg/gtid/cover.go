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

// Lacks returns the transactions of want that have does not hold, by Cover's rule.
func Lacks(have, want Set) Set { return want.Subtract(Cover(have)) }

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
