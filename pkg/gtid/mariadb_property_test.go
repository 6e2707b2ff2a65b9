package gtid_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// history is one domain's gtid_strict_mode history: writers[i] wrote seq i+1.
type history []uint32

// randomHistory appends blocks of writes by servers drawn from servers.
func randomHistory(r *rand.Rand, h history, servers []uint32, blocks int) history {
	for range blocks {
		s := servers[r.IntN(len(servers))]
		for range 1 + r.IntN(5) {
			h = append(h, s)
		}
	}
	return h
}

// state is what @@gtid_binlog_state shows for the history of domain d.
func (h history) state(d uint32) []gtid.GTID {
	last := map[uint32]uint64{}
	for i, s := range h {
		last[s] = uint64(i + 1)
	}
	var out []gtid.GTID
	for s, seq := range last {
		out = append(out, gtid.GTID{Domain: d, Server: s, Seq: seq})
	}
	return out
}

// TestPropertyMariaDBDivergence simulates, per domain, a shared history, a
// source that continues it, and a replica (server 9) that copies a prefix and
// then writes locally. Both errant rules must find exactly the local writes.
func TestPropertyMariaDBDivergence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const replicaID = 9
	for range 2000 {
		var srcState, repState gtid.BinlogState
		var slavePos gtid.Pos
		var wantErrant []string
		var total uint64
		for d := range uint32(2) {
			shared := randomHistory(r, nil, []uint32{1, 2, 3, replicaID}, r.IntN(4))
			source := randomHistory(r, slices.Clone(shared), []uint32{1, 2, 3}, r.IntN(3))
			local := r.IntN(4)
			replica := slices.Clone(shared)
			for range local {
				replica = append(replica, replicaID)
			}
			srcState = append(srcState, source.state(d)...)
			repState = append(repState, replica.state(d)...)
			total += uint64(len(replica))
			if k := len(shared); k > 0 {
				slavePos = append(slavePos, gtid.GTID{Domain: d, Server: shared[k-1], Seq: uint64(k)})
			}
			if local > 0 {
				wantErrant = append(wantErrant, fmt.Sprintf("%d-%d:%d-%d", d, replicaID, len(shared)+1, len(replica)))
			}
		}
		want := gtid.MustParseSet(strings.Join(wantErrant, ","))
		ctx := fmt.Sprintf("source=%q replica=%q slave_pos=%q", srcState, repState, slavePos)
		if got := gtid.BinlogErrant(repState, srcState); !got.Equal(want) {
			t.Fatalf("%s: BinlogErrant = %q, want %q", ctx, got, want)
		}
		if got := gtid.MariaDBErrant(repState, slavePos); !got.Equal(want) {
			t.Fatalf("%s: MariaDBErrant = %q, want %q", ctx, got, want)
		}
		checkStateRoundTrip(t, ctx, repState, total)
	}
}

// checkStateRoundTrip: the derived Set counts the whole gap-free history, and
// the state and its Pos survive String/Parse.
func checkStateRoundTrip(t *testing.T, ctx string, b gtid.BinlogState, total uint64) {
	t.Helper()
	if got := b.Set().Count(); got != total {
		t.Fatalf("%s: Set().Count() = %d, want %d", ctx, got, total)
	}
	again, err := gtid.ParseBinlogState(b.String())
	if err != nil || again.String() != b.String() || !again.Set().Equal(b.Set()) {
		t.Fatalf("%s: state does not round-trip: %q, %v", ctx, again, err)
	}
	pos, err := gtid.ParsePos(b.Pos().String())
	if err != nil || pos.String() != b.Pos().String() {
		t.Fatalf("%s: pos does not round-trip: %q, %v", ctx, pos, err)
	}
	fromSet, err := gtid.PosFromSet(b.Set())
	if err != nil || fromSet.String() != b.Pos().String() {
		t.Fatalf("%s: PosFromSet(Set()) = %q, want %q (%v)", ctx, fromSet, b.Pos(), err)
	}
}

// TestPropertyHasReached checks HasReached against a per-domain comparison.
func TestPropertyHasReached(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	randomPos := func() (gtid.Pos, map[uint32]uint64) {
		var p gtid.Pos
		m := map[uint32]uint64{}
		for d := range uint32(3) {
			if r.IntN(3) > 0 {
				seq := 1 + uint64(r.IntN(5))
				p = append(p, gtid.GTID{Domain: d, Server: uint32(r.IntN(3)), Seq: seq})
				m[d] = seq
			}
		}
		return p, m
	}
	for range 2000 {
		ours, om := randomPos()
		target, tm := randomPos()
		want := true
		for d, seq := range tm {
			if om[d] < seq {
				want = false
			}
		}
		if got := ours.HasReached(target); got != want {
			t.Fatalf("%q.HasReached(%q) = %v, want %v", ours, target, got, want)
		}
	}
}
