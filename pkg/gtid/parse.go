package gtid

import "strings"

// scanner walks GTID text. Tokens are maximal runs of bytes that are neither
// whitespace nor one of the separators ',' and ':'.
type scanner struct {
	s string
	i int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (sc *scanner) skipSpace() {
	for sc.i < len(sc.s) && isSpace(sc.s[sc.i]) {
		sc.i++
	}
}

func (sc *scanner) atEnd() bool { return sc.i >= len(sc.s) }

// peek returns the next byte after whitespace, or 0 at the end.
func (sc *scanner) peek() byte {
	sc.skipSpace()
	if sc.atEnd() {
		return 0
	}
	return sc.s[sc.i]
}

// token skips whitespace and returns the next token and its offset ("" if none).
func (sc *scanner) token() (string, int) {
	sc.skipSpace()
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if isSpace(c) || c == ',' || c == ':' {
			break
		}
		sc.i++
	}
	return sc.s[start:sc.i], start
}

// describe returns the next byte as a token for error messages ("" at the end).
func (sc *scanner) describe() string {
	if sc.peek() == 0 {
		return ""
	}
	return string(sc.s[sc.i])
}

// ParseSet parses MySQL GTID-set text as in @@gtid_executed:
//
//	"uuid:1-5:7-9,uuid2:3"          untagged
//	"uuid:1-5:tag:1-3:tag2:4"       MySQL 8.3+ tags: a tag applies to the intervals after it
//	"0-1:1-50,0-2:51-100"           MariaDB-derived ids, as String prints BinlogState.Set
//
// Whitespace and newlines around tokens are ignored; "" (or only whitespace) is
// the empty set. Uuids and tags are case-insensitive. Overlapping intervals and
// repeated sources are merged. A source with no intervals ("uuid") adds
// nothing. Errors wrap ErrSyntax: malformed uuid or tag, a tag not followed by
// an interval, end < start, sequence number 0 or above MaxSeq, empty entries.
func ParseSet(text string) (Set, error) {
	sc := &scanner{s: text}
	b := builder{}
	if sc.peek() == 0 {
		return Set{}, nil
	}
	for {
		if err := parseEntry(sc, b); err != nil {
			return Set{}, err
		}
		switch sc.peek() {
		case 0:
			return b.set(), nil
		case ',':
			sc.i++
		default:
			tok, off := sc.token()
			if tok == "" {
				tok = sc.describe()
			}
			return Set{}, syntaxErr(off, tok, "expected ',' or end of input")
		}
	}
}

// parseEntry parses one "source(:interval|:tag)*" entry into b.
func parseEntry(sc *scanner, b builder) error {
	tok, off := sc.token()
	if tok == "" {
		return syntaxErr(sc.i, sc.describe(), "expected a source id (uuid or domain-server)")
	}
	id, err := parseSourceHead(tok, off)
	if err != nil {
		return err
	}
	pendingTag, pendingOff := "", 0 // a tag seen but not yet followed by an interval
	for sc.peek() == ':' {
		sc.i++
		tok, off = sc.token()
		switch {
		case tok == "":
			return syntaxErr(sc.i, sc.describe(), "expected an interval or tag after ':'")
		case isTagStart(tok):
			if id.maria {
				return syntaxErr(off, tok, "MariaDB source ids cannot have tags")
			}
			if pendingTag != "" {
				return syntaxErr(pendingOff, pendingTag, "tag has no intervals")
			}
			if id.tag, err = parseTag(tok, off); err != nil {
				return err
			}
			pendingTag, pendingOff = tok, off
		default:
			iv, err := parseInterval(tok, off)
			if err != nil {
				return err
			}
			b.add(id, iv)
			pendingTag = ""
		}
	}
	if pendingTag != "" {
		return syntaxErr(pendingOff, pendingTag, "tag has no intervals")
	}
	return nil
}

// parseInterval parses "N" or "N-M" with 1 <= N <= M <= MaxSeq.
func parseInterval(tok string, off int) (Interval, error) {
	lo, hi, isRange := strings.Cut(tok, "-")
	start, err := parseSeq(lo, off, tok)
	if err != nil {
		return Interval{}, err
	}
	if !isRange {
		return Interval{start, start}, nil
	}
	end, err := parseSeq(hi, off, tok)
	if err != nil {
		return Interval{}, err
	}
	if end < start {
		return Interval{}, syntaxErr(off, tok, "interval end %d is below its start %d", end, start)
	}
	return Interval{start, end}, nil
}
