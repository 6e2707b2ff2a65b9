package sim

import "testing"

// TestNetworkOneWay: a link that loses one direction delivers requests the
// other way, loses their answers, and carries no replication either way.
func TestNetworkOneWay(t *testing.T) {
	nw := newNetwork(2) // sites 0 and 1, operator 2
	nw.cutOneWay(0, 2, 10)
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"site to operator: request lost", nw.delivers(0, 2, 5), false},
		{"operator to site: request arrives", nw.delivers(2, 0, 5), true},
		{"operator to site: answer lost, so no call", nw.call(2, 0, 5), false},
		{"site to operator: no call", nw.call(0, 2, 5), false},
		{"the other links are whole", nw.call(0, 1, 5), true},
		{"no connection either way", nw.connected(2, 0, 5), false},
		{"healed at its end", nw.call(0, 2, 10), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Fatalf("got %v, want %v", c.got, c.want)
			}
		})
	}
	nw.cutOneWay(1, 0, 10)
	if nw.stream(0, 1, 4) || nw.stream(1, 0, 4) {
		t.Fatal("replication moved over a link that lost one direction")
	}
}
