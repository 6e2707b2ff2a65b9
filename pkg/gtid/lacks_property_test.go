package gtid_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// TestPropertyLacksMariaDBForks: two servers' histories of one domain share
// a prefix and then fork, each branch written by servers of its own (a
// server's history is linear). Read from their binlog states, Lacks must
// count exactly the wanted history's seqs past the fork, and name no seq
// at or below it, whichever server BinlogState.Set names for them.
func TestPropertyLacksMariaDBForks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		shared := randomHistory(r, nil, []uint32{1, 2, 3, 4}, r.IntN(6))
		want := randomHistory(r, slices.Clone(shared), []uint32{1, 2}, r.IntN(3))
		have := randomHistory(r, slices.Clone(shared), []uint32{3, 4}, r.IntN(3))
		wantSet := gtid.BinlogState(want.state(0)).Set()
		haveSet := gtid.BinlogState(have.state(0)).Set()
		got := gtid.Lacks(haveSet, wantSet)
		if n := got.Count(); n != uint64(len(want)-len(shared)) {
			t.Fatalf("shared %v, want %v, have %v: Lacks = %s (%d), want %d transactions",
				shared, want, have, got, n, len(want)-len(shared))
		}
		for _, src := range got.Sources() {
			if ivs := got.Intervals(src); ivs[0].Start <= uint64(len(shared)) {
				t.Fatalf("shared %v, want %v, have %v: Lacks = %s names a shared seq", shared, want, have, got)
			}
		}
	}
}
