package gtid

import (
	"slices"
	"strings"
)

// Set is an immutable set of GTIDs: source id -> sorted, merged, non-overlapping
// intervals. A source id is a MySQL server uuid, a MySQL 8.3+ "uuid:tag"
// (tagged GTIDs), or a MariaDB "<domain>-<server>" pair. The zero Set is empty.
// Compare sets with Equal, not ==.
type Set struct {
	srcs []source // sorted by compareIDs; every source has at least one interval
}

type source struct {
	id  sourceID
	ivs []Interval // normalized, non-empty
}

// MustParseSet is ParseSet that panics on error; for tests and constants.
func MustParseSet(s string) Set {
	set, err := ParseSet(s)
	if err != nil {
		panic(err)
	}
	return set
}

// String returns the canonical text: sources sorted, intervals merged, the
// tags of one uuid grouped after its untagged intervals ("uuid:1-5:tag:1-3"),
// entries separated by ",". It round-trips through ParseSet.
func (s Set) String() string {
	var b strings.Builder
	for i, src := range s.srcs {
		sameUUID := i > 0 && !src.id.maria && s.srcs[i-1].id.uuid == src.id.uuid
		switch {
		case sameUUID:
			b.WriteString(":" + src.id.tag)
		case i > 0:
			b.WriteByte(',')
			fallthrough
		default:
			b.WriteString(src.id.String())
		}
		for _, iv := range src.ivs {
			b.WriteByte(':')
			b.WriteString(iv.String())
		}
	}
	return b.String()
}

// IsEmpty reports whether the set holds no GTID.
func (s Set) IsEmpty() bool { return len(s.srcs) == 0 }

// Count is the number of transactions in the set, saturating at math.MaxUint64.
func (s Set) Count() uint64 {
	var n uint64
	for _, src := range s.srcs {
		n = addSat(n, countIvs(src.ivs))
	}
	return n
}

// Sources returns the source ids in canonical order ("uuid", "uuid:tag" or "domain-server").
func (s Set) Sources() []string {
	out := make([]string, len(s.srcs))
	for i, src := range s.srcs {
		out[i] = src.id.String()
	}
	return out
}

// Intervals returns a copy of the intervals of one source id (as Sources spells
// it), or nil when the set has none for it.
func (s Set) Intervals(sourceID string) []Interval {
	for _, src := range s.srcs {
		if src.id.String() == sourceID {
			return slices.Clone(src.ivs)
		}
	}
	return nil
}

// Union returns s ∪ o.
func (s Set) Union(o Set) Set {
	return merge(s, o, true, func(a, b []Interval) []Interval {
		switch {
		case a == nil:
			return b
		case b == nil:
			return a
		}
		return unionIvs(a, b)
	})
}

// Subtract returns s minus o.
func (s Set) Subtract(o Set) Set {
	return merge(s, o, false, func(a, b []Interval) []Interval {
		if b == nil {
			return a
		}
		return subtractIvs(a, b)
	})
}

// Contains reports whether s is a superset of o (s ⊇ o).
func (s Set) Contains(o Set) bool {
	i := 0
	for _, src := range o.srcs {
		for i < len(s.srcs) && compareIDs(s.srcs[i].id, src.id) < 0 {
			i++
		}
		if i == len(s.srcs) || compareIDs(s.srcs[i].id, src.id) != 0 {
			return false
		}
		if !containsIvs(s.srcs[i].ivs, src.ivs) {
			return false
		}
	}
	return true
}

// Equal reports whether s and o hold the same GTIDs.
func (s Set) Equal(o Set) bool {
	return slices.EqualFunc(s.srcs, o.srcs, func(a, b source) bool {
		return a.id == b.id && slices.Equal(a.ivs, b.ivs)
	})
}

// merge walks the sources of s and o in order and combines their intervals with
// op (nil stands for "source absent"). Sources only in o are kept only when
// keepOnlyO. Sources whose result is empty are dropped. Result slices may be
// shared with the operands, which is safe because Sets are never modified.
func merge(s, o Set, keepOnlyO bool, op func(a, b []Interval) []Interval) Set {
	var out []source
	add := func(id sourceID, ivs []Interval) {
		if len(ivs) > 0 {
			out = append(out, source{id, ivs})
		}
	}
	i, j := 0, 0
	for i < len(s.srcs) || j < len(o.srcs) {
		c := 0
		switch {
		case i == len(s.srcs):
			c = 1
		case j == len(o.srcs):
			c = -1
		default:
			c = compareIDs(s.srcs[i].id, o.srcs[j].id)
		}
		switch {
		case c < 0:
			add(s.srcs[i].id, op(s.srcs[i].ivs, nil))
			i++
		case c > 0:
			if keepOnlyO {
				add(o.srcs[j].id, op(nil, o.srcs[j].ivs))
			}
			j++
		default:
			add(s.srcs[i].id, op(s.srcs[i].ivs, o.srcs[j].ivs))
			i, j = i+1, j+1
		}
	}
	return Set{srcs: out}
}

// Errant returns the transactions the replica has that the source does not
// (replica minus source). Non-empty means the replica diverged.
func Errant(replica, source Set) Set { return replica.Subtract(source) }

// Relation is how two sets compare.
type Relation int

// The relations Compare returns.
const (
	Equal     Relation = iota // a = b
	Superset                  // a ⊋ b: a has everything b has, and more
	Subset                    // a ⊊ b
	Divergent                 // neither contains the other
)

func (r Relation) String() string {
	switch r {
	case Equal:
		return "Equal"
	case Superset:
		return "Superset"
	case Subset:
		return "Subset"
	case Divergent:
		return "Divergent"
	}
	return "Relation(?)"
}

// Compare returns the relation of a to b.
func Compare(a, b Set) Relation {
	ab, ba := a.Contains(b), b.Contains(a)
	switch {
	case ab && ba:
		return Equal
	case ab:
		return Superset
	case ba:
		return Subset
	}
	return Divergent
}

// builder collects intervals per source and produces a normalized Set.
type builder map[sourceID][]Interval

func (b builder) add(id sourceID, iv Interval) { b[id] = append(b[id], iv) }

func (b builder) set() Set {
	out := make([]source, 0, len(b))
	for id, ivs := range b {
		if ivs = normalize(ivs); len(ivs) > 0 {
			out = append(out, source{id, ivs})
		}
	}
	slices.SortFunc(out, func(x, y source) int { return compareIDs(x.id, y.id) })
	if len(out) == 0 {
		return Set{}
	}
	return Set{srcs: out}
}
