package gtid

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// GTID is one MariaDB global transaction id, printed "domain-server-seq".
type GTID struct {
	Domain uint32
	Server uint32
	Seq    uint64
}

func (g GTID) String() string {
	return strconv.FormatUint(uint64(g.Domain), 10) + "-" +
		strconv.FormatUint(uint64(g.Server), 10) + "-" + strconv.FormatUint(g.Seq, 10)
}

// ParseGTID parses one "domain-server-seq" (seq 1..MaxSeq). Errors wrap ErrSyntax.
func ParseGTID(s string) (GTID, error) {
	sc := &scanner{s: s}
	tok, off := sc.token()
	if tok == "" {
		return GTID{}, syntaxErr(sc.i, sc.describe(), "expected a MariaDB GTID domain-server-seq")
	}
	g, err := parseGTIDToken(tok, off)
	if err != nil {
		return GTID{}, err
	}
	if sc.peek() != 0 {
		rest, roff := sc.token()
		if rest == "" {
			rest = sc.describe()
		}
		return GTID{}, syntaxErr(roff, rest, "unexpected text after GTID")
	}
	return g, nil
}

func parseGTIDToken(tok string, off int) (GTID, error) {
	parts := strings.Split(tok, "-")
	if len(parts) != 3 {
		return GTID{}, syntaxErr(off, tok, "malformed MariaDB GTID: want domain-server-seq")
	}
	dom, err := parseUint(parts[0], 32)
	if err != nil {
		return GTID{}, syntaxErr(off, tok, "malformed or out-of-range domain id %q", parts[0])
	}
	srv, err := parseUint(parts[1], 32)
	if err != nil {
		return GTID{}, syntaxErr(off, tok, "malformed or out-of-range server id %q", parts[1])
	}
	seq, err := parseSeq(parts[2], off, tok)
	if err != nil {
		return GTID{}, err
	}
	return GTID{Domain: uint32(dom), Server: uint32(srv), Seq: seq}, nil
}

// parseGTIDList parses "g1,g2,..." with whitespace tolerated; "" is empty.
// dup reports whether two GTIDs clash, and what to call the clash.
func parseGTIDList(text string, dup func(a, b GTID) (bool, string)) ([]GTID, error) {
	sc := &scanner{s: text}
	var out []GTID
	if sc.peek() == 0 {
		return nil, nil
	}
	for {
		tok, off := sc.token()
		if tok == "" {
			return nil, syntaxErr(sc.i, sc.describe(), "expected a MariaDB GTID domain-server-seq")
		}
		g, err := parseGTIDToken(tok, off)
		if err != nil {
			return nil, err
		}
		for _, prev := range out {
			if clash, what := dup(prev, g); clash {
				return nil, syntaxErr(off, tok, "duplicate %s (already have %s)", what, prev)
			}
		}
		out = append(out, g)
		switch sc.peek() {
		case 0:
			return out, nil
		case ',':
			sc.i++
		default:
			rest, roff := sc.token()
			if rest == "" {
				rest = sc.describe()
			}
			return nil, syntaxErr(roff, rest, "expected ',' or end of input")
		}
	}
}

// Pos is a MariaDB GTID position: one GTID per domain, as in @@gtid_binlog_pos,
// @@gtid_slave_pos and @@gtid_current_pos, and as MASTER_GTID_WAIT takes it.
type Pos []GTID

// ParsePos parses "0-1-100,1-2-5" ("" is the empty position). A domain that
// appears twice is an error. The result is sorted by domain.
func ParsePos(s string) (Pos, error) {
	gs, err := parseGTIDList(s, func(a, b GTID) (bool, string) {
		return a.Domain == b.Domain, "domain " + strconv.FormatUint(uint64(b.Domain), 10)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(gs, func(a, b GTID) int { return cmp.Compare(a.Domain, b.Domain) })
	return Pos(gs), nil
}

// String prints the position canonically, sorted by domain ("" when empty).
func (p Pos) String() string {
	gs := slices.Clone(p)
	slices.SortStableFunc(gs, func(a, b GTID) int { return cmp.Compare(a.Domain, b.Domain) })
	return joinGTIDs(gs)
}

// Domain returns the GTID of one domain, if the position has it.
func (p Pos) Domain(domain uint32) (GTID, bool) {
	for _, g := range p {
		if g.Domain == domain {
			return g, true
		}
	}
	return GTID{}, false
}

// Seq is the seq p reached in domain, 0 when p has none there.
func (p Pos) Seq(domain uint32) uint64 {
	g, _ := p.Domain(domain)
	return g.Seq
}

// HasReached reports whether p is at or past target: for every domain in
// target, p has that domain with a seq >= target's. Server ids are ignored,
// as MASTER_GTID_WAIT ignores them. An empty target is always reached.
func (p Pos) HasReached(target Pos) bool {
	for _, t := range target {
		g, ok := p.Domain(t.Domain)
		if !ok && t.Seq > 0 || ok && g.Seq < t.Seq {
			return false
		}
	}
	return true
}

func joinGTIDs(gs []GTID) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return strings.Join(parts, ",")
}
