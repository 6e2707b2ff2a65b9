package load

import (
	"sort"
	"time"
)

// span is a stretch during which one site certainly accepted writes: from
// the end of one acknowledged probe to the start of a later one, with no
// failed probe of that site in between (the commits happened inside their
// attempts, so the site was writable at both ends).
type span struct {
	site     string
	from, to time.Time
}

// spans builds each site's certain writable spans from its probes.
func spans(probes []Attempt) []span {
	bySite := map[string][]Attempt{}
	for _, p := range probes {
		bySite[p.Site] = append(bySite[p.Site], p)
	}
	var out []span
	for site, ps := range bySite {
		sortByStart(ps)
		var first *Attempt
		var last Attempt
		flush := func() {
			if first != nil && first.End.Before(last.Start) {
				out = append(out, span{site: site, from: first.End, to: last.Start})
			}
			first = nil
		}
		for i := range ps {
			if !ps[i].OK {
				flush()
				continue
			}
			if first == nil {
				first = &ps[i]
			}
			last = ps[i]
		}
		flush()
	}
	// Map order is random: sort so that reports and tests are deterministic.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].from.Equal(out[j].from) {
			return out[i].from.Before(out[j].from)
		}
		return out[i].site < out[j].site
	})
	return out
}

// overlaps finds acknowledged writes (probes or writers') of one site that
// lie wholly inside a certain writable span of another site.
func overlaps(h *History) []Overlap {
	var out []Overlap
	all := append(append([]Attempt(nil), h.Probes...), h.Attempts...)
	for _, s := range spans(h.Probes) {
		for _, a := range all {
			if !a.OK || a.Site == "" || a.Site == s.site {
				continue
			}
			if a.Start.After(s.from) && a.End.Before(s.to) {
				out = append(out, Overlap{Site: s.site, From: s.from, To: s.to, Other: a.Site, At: a})
				break // one piece of evidence per span is enough
			}
		}
	}
	return out
}
