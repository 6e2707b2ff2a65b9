package sim

import (
	"fmt"
	"strings"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// txs is a mysqld's executed (or received) transactions in compact form:
// txs[k] transactions of site k's server, numbered 1..txs[k]. Replication
// applies a source's transactions in order, so every site's set per server is
// such a prefix, and this is exact.
type txs []uint64

func (t txs) clone() txs { return append(txs(nil), t...) }

// contains reports whether t holds every transaction of o.
func (t txs) contains(o txs) bool {
	for k := range o {
		if o[k] > t[k] {
			return false
		}
	}
	return true
}

// raise makes t hold every transaction of o too.
func (t txs) raise(o txs) {
	for k := range o {
		t[k] = max(t[k], o[k])
	}
}

// behind counts the transactions of o that t lacks.
func (t txs) behind(o txs) uint64 {
	var n uint64
	for k := range o {
		if o[k] > t[k] {
			n += o[k] - t[k]
		}
	}
	return n
}

// set renders t as a gtid.Set, uuids[k] naming site k's server.
func (t txs) set(uuids []string) gtid.Set {
	var parts []string
	for k, n := range t {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s:1-%d", uuids[k], n))
		}
	}
	return parsedSet(strings.Join(parts, ",")) // gtidmemo.go
}

func (t txs) String() string {
	parts := make([]string, len(t))
	for k, n := range t {
		parts[k] = fmt.Sprint(n)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
