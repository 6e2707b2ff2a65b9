package gtid

import (
	"cmp"
	"strconv"
	"strings"
)

// sourceID identifies the origin of a run of GTIDs: a MySQL server uuid with an
// optional tag, or a MariaDB (domain, server) pair.
type sourceID struct {
	maria  bool
	domain uint32 // MariaDB only
	server uint32 // MariaDB only
	uuid   string // MySQL only: lowercase, hyphenated
	tag    string // MySQL only: lowercase, "" when untagged
}

func (id sourceID) String() string {
	switch {
	case id.maria:
		return strconv.FormatUint(uint64(id.domain), 10) + "-" + strconv.FormatUint(uint64(id.server), 10)
	case id.tag != "":
		return id.uuid + ":" + id.tag
	default:
		return id.uuid
	}
}

// compareIDs orders MariaDB ids numerically before MySQL ids; MySQL ids by
// uuid, then untagged before tagged, then by tag.
func compareIDs(a, b sourceID) int {
	if a.maria != b.maria {
		if a.maria {
			return -1
		}
		return 1
	}
	if a.maria {
		return cmp.Or(cmp.Compare(a.domain, b.domain), cmp.Compare(a.server, b.server))
	}
	return cmp.Or(strings.Compare(a.uuid, b.uuid), strings.Compare(a.tag, b.tag))
}

// parseSourceHead parses the token that starts a set entry: a uuid or "domain-server".
func parseSourceHead(tok string, off int) (sourceID, error) {
	if d, s, ok := strings.Cut(tok, "-"); ok && isDigits(d) && isDigits(s) {
		dom, err := parseUint(d, 32)
		if err != nil {
			return sourceID{}, syntaxErr(off, tok, "MariaDB domain id out of range")
		}
		srv, err := parseUint(s, 32)
		if err != nil {
			return sourceID{}, syntaxErr(off, tok, "MariaDB server id out of range")
		}
		return sourceID{maria: true, domain: uint32(dom), server: uint32(srv)}, nil
	}
	u, ok := parseUUID(tok)
	if !ok {
		return sourceID{}, syntaxErr(off, tok, "malformed source id: want a uuid or MariaDB domain-server")
	}
	return sourceID{uuid: u}, nil
}

// parseUUID accepts the hyphenated 8-4-4-4-12 hex form and lowercases it.
func parseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return "", false
			}
			continue
		}
		if !isHex(c) {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// maxTagLen is MySQL's limit on GTID tag length.
const maxTagLen = 32

// isTagStart reports whether tok looks like a tag rather than an interval.
func isTagStart(tok string) bool {
	return tok != "" && (isLetter(tok[0]) || tok[0] == '_')
}

// parseTag validates a MySQL 8.3+ GTID tag: a letter or underscore, then
// letters, digits and underscores, at most 32 in all; case-insensitive.
func parseTag(tok string, off int) (string, error) {
	if len(tok) > maxTagLen {
		return "", syntaxErr(off, tok, "tag longer than %d characters", maxTagLen)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !isLetter(c) && c != '_' && !(i > 0 && isDigit(c)) {
			return "", syntaxErr(off, tok, "malformed tag: want a letter or '_' then letters, digits or '_'")
		}
	}
	return strings.ToLower(tok), nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseUint parses plain decimal digits (no sign) of at most bits bits.
func parseUint(s string, bits int) (uint64, error) {
	if !isDigits(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseUint(s, 10, bits)
}

// parseSeq parses a sequence number: decimal, 1..MaxSeq.
func parseSeq(s string, off int, tok string) (uint64, error) {
	if !isDigits(s) {
		return 0, syntaxErr(off, tok, "malformed sequence number %q", s)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > MaxSeq {
		return 0, syntaxErr(off, tok, "sequence number %q overflows (max %d)", s, uint64(MaxSeq))
	}
	if n == 0 {
		return 0, syntaxErr(off, tok, "sequence number 0 is not valid")
	}
	return n, nil
}
