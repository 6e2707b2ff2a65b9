package gtid

import (
	"math"
	"slices"
	"strconv"
)

// MaxSeq is the largest sequence number accepted anywhere in this package
// (MySQL's GNO limit; MariaDB never gets near it in practice).
const MaxSeq = math.MaxInt64

// Interval is the closed range [Start, End] of sequence numbers, 1 <= Start <= End <= MaxSeq.
type Interval struct {
	Start, End uint64
}

// Count is the number of sequence numbers in the interval.
func (iv Interval) Count() uint64 { return iv.End - iv.Start + 1 }

func (iv Interval) String() string {
	if iv.Start == iv.End {
		return strconv.FormatUint(iv.Start, 10)
	}
	return strconv.FormatUint(iv.Start, 10) + "-" + strconv.FormatUint(iv.End, 10)
}

// normalize sorts intervals and merges overlapping or adjacent ones, in place.
func normalize(ivs []Interval) []Interval {
	if len(ivs) == 0 {
		return nil
	}
	slices.SortFunc(ivs, func(a, b Interval) int {
		if a.Start != b.Start {
			if a.Start < b.Start {
				return -1
			}
			return 1
		}
		return 0
	})
	out := ivs[:1]
	for _, iv := range ivs[1:] {
		last := &out[len(out)-1]
		if iv.Start <= last.End+1 { // End <= MaxSeq, so End+1 cannot overflow
			last.End = max(last.End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// unionIvs merges two normalized lists into a new normalized list.
func unionIvs(a, b []Interval) []Interval {
	out := make([]Interval, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	return normalize(out)
}

// subtractIvs returns a minus b for normalized lists, as a new list.
func subtractIvs(a, b []Interval) []Interval {
	var out []Interval
	j := 0
	for _, iv := range a {
		cur := iv
		for j < len(b) && b[j].End < cur.Start {
			j++
		}
		k := j
		for ; k < len(b) && b[k].Start <= cur.End; k++ {
			if b[k].Start > cur.Start {
				out = append(out, Interval{cur.Start, b[k].Start - 1})
			}
			if b[k].End >= cur.End {
				cur.Start = cur.End + 1 // consumed
				break
			}
			cur.Start = b[k].End + 1
		}
		if cur.Start <= cur.End {
			out = append(out, cur)
		}
	}
	return out
}

// containsIvs reports whether normalized a covers every element of normalized b.
func containsIvs(a, b []Interval) bool {
	i := 0
	for _, iv := range b {
		for i < len(a) && a[i].End < iv.Start {
			i++
		}
		// a is merged, so iv must lie within one interval of a.
		if i == len(a) || a[i].Start > iv.Start || a[i].End < iv.End {
			return false
		}
	}
	return true
}

func countIvs(ivs []Interval) uint64 {
	var n uint64
	for _, iv := range ivs {
		n = addSat(n, iv.Count())
	}
	return n
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
