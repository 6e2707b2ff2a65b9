package gtid

import (
	"cmp"
	"slices"
	"strconv"
)

// BinlogState is MariaDB's @@gtid_binlog_state: the last GTID written to the
// binlog by each (domain, server) pair.
type BinlogState []GTID

// ParseBinlogState parses "0-1-100,0-2-50,1-3-7" ("" is empty). A (domain,
// server) pair that appears twice is an error. The result is in canonical order.
func ParseBinlogState(s string) (BinlogState, error) {
	gs, err := parseGTIDList(s, func(a, b GTID) (bool, string) {
		return a.Domain == b.Domain && a.Server == b.Server, "domain-server " +
			strconv.FormatUint(uint64(b.Domain), 10) + "-" + strconv.FormatUint(uint64(b.Server), 10)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(gs, compareStateOrder)
	return BinlogState(gs), nil
}

// compareStateOrder is the canonical BinlogState order: by domain, then seq,
// then server; so each domain's newest GTID (its binlog pos) comes last.
func compareStateOrder(a, b GTID) int {
	return cmp.Or(cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Server, b.Server))
}

// String prints the state in canonical order (by domain, then seq, then server).
func (b BinlogState) String() string {
	gs := slices.Clone(b)
	slices.SortStableFunc(gs, compareStateOrder)
	return joinGTIDs(gs)
}

// normalized returns the state with one entry per (domain, server) holding its
// highest seq, entries with seq 0 dropped, seqs clamped to MaxSeq, in canonical order.
func (b BinlogState) normalized() []GTID {
	type key struct{ d, s uint32 }
	last := map[key]uint64{}
	for _, g := range b {
		if g.Seq == 0 {
			continue
		}
		k := key{g.Domain, g.Server}
		last[k] = max(last[k], min(g.Seq, MaxSeq))
	}
	out := make([]GTID, 0, len(last))
	for k, seq := range last {
		out = append(out, GTID{Domain: k.d, Server: k.s, Seq: seq})
	}
	slices.SortFunc(out, compareStateOrder)
	return out
}

// Set derives the executed history as a Set with source ids "<domain>-<server>".
// Per domain, servers are ordered by their last seq; server k owns the seqs
// (seq_{k-1}, seq_k], the first owning [1, seq_1]. If several servers share a
// last seq (impossible under gtid_strict_mode), the lowest server id owns the
// range and the others own just that seq, so every GTID listed in the state is
// in the Set.
//
// Under gtid_strict_mode each domain's history is gap-free, so the Set has
// exactly the executed transactions; which server wrote which seq is a guess,
// though, once a server wrote, stopped, and wrote again (a failover and a
// failback). Comparing two servers' derived Sets with Errant can therefore
// report false errant ranges after a failback; BinlogErrant does not.
func (b BinlogState) Set() Set {
	bld := builder{}
	var prev GTID // previous entry in the same domain
	for i, g := range b.normalized() {
		id := sourceID{maria: true, domain: g.Domain, server: g.Server}
		switch {
		case i == 0 || prev.Domain != g.Domain:
			bld.add(id, Interval{1, g.Seq})
		case prev.Seq < g.Seq:
			bld.add(id, Interval{prev.Seq + 1, g.Seq})
		default: // tie with a lower server id
			bld.add(id, Interval{g.Seq, g.Seq})
		}
		prev = g
	}
	return bld.set()
}

// Pos returns, per domain, the GTID with the highest seq (the lowest server id
// on a tie), which is @@gtid_binlog_pos.
func (b BinlogState) Pos() Pos {
	var out Pos
	for _, g := range b.normalized() {
		switch n := len(out); {
		case n == 0 || out[n-1].Domain != g.Domain:
			out = append(out, g)
		case g.Seq > out[n-1].Seq:
			out[n-1] = g
		}
	}
	return out
}

// PosFromSet turns a Set with MariaDB source ids back into a position for
// MASTER_GTID_WAIT: per domain, the highest seq and the server that owns it
// (the lowest server id on a tie). It returns ErrNotMariaDB if the set has any
// MySQL uuid. The empty set gives an empty Pos.
func PosFromSet(s Set) (Pos, error) {
	var out Pos
	for _, src := range s.srcs {
		if !src.id.maria {
			return nil, ErrNotMariaDB
		}
		g := GTID{Domain: src.id.domain, Server: src.id.server, Seq: src.ivs[len(src.ivs)-1].End}
		switch n := len(out); {
		case n == 0 || out[n-1].Domain != g.Domain:
			out = append(out, g)
		case g.Seq > out[n-1].Seq:
			out[n-1] = g
		}
	}
	return out, nil
}

// MariaDBErrant returns the transactions a MariaDB replica wrote itself rather
// than received from its source, from the replica's own @@gtid_binlog_state and
// @@gtid_slave_pos (an errant write shows as gtid_binlog_pos != gtid_slave_pos).
//
// The rule, per domain d, with slavePos at d-s-p (p = 0 when slavePos lacks d):
// a GTID d-x-n of binlogState.Set() is errant when n > p, or when n == p and
// x != s (another server's transaction at the replicated seq). Under
// gtid_strict_mode a local write always takes a seq above everything
// replicated, so this finds exactly the local writes.
//
// It is only meaningful on a server that has been a pure replica since
// gtid_slave_pos was last set: a former primary that was re-pointed with
// MASTER_USE_GTID=current_pos keeps a stale slave pos until it applies an event
// in each domain, and its old writes would show as errant. To compare against a
// specific source, use BinlogErrant with both servers' binlog states.
func MariaDBErrant(binlogState BinlogState, slavePos Pos) Set {
	bld := builder{}
	for _, src := range binlogState.Set().srcs {
		var p uint64
		var ps uint32
		if g, ok := slavePos.Domain(src.id.domain); ok {
			p, ps = g.Seq, g.Server
		}
		for _, iv := range src.ivs {
			lo := max(iv.Start, p+1)
			if p > 0 && iv.Start <= p && p <= iv.End && src.id.server != ps {
				lo = p
			}
			if lo <= iv.End {
				bld.add(src.id, Interval{lo, iv.End})
			}
		}
	}
	return bld.set()
}

// BinlogErrant returns the transactions in the replica's history that the
// source's history lacks, from both servers' @@gtid_binlog_state. A GTID
// d-x-n of replica.Set() is errant unless source has a GTID from server x in
// domain d with seq >= n. Unlike Errant(replica.Set(), source.Set()) this does
// not depend on guessing which server wrote which seq, so a lagging replica is
// never reported errant after a failover and failback; under gtid_strict_mode
// a replica that diverged always has an errant GTID by this rule.
func BinlogErrant(replica, source BinlogState) Set {
	bld := builder{}
	for _, g := range source.normalized() {
		bld.add(sourceID{maria: true, domain: g.Domain, server: g.Server}, Interval{1, g.Seq})
	}
	return replica.Set().Subtract(bld.set())
}
