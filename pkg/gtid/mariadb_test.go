package gtid_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

func TestParsePos(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"one", "0-1-100", "0-1-100"},
		{"sorted by domain", "1-2-5,0-1-100", "0-1-100,1-2-5"},
		{"numeric domain order", "10-1-1, 2-1-1", "2-1-1,10-1-1"},
		{"whitespace", " 0-1-100 ,\n 1-2-5 ", "0-1-100,1-2-5"},
		{"large ids", "4294967295-4294967295-9223372036854775807", "4294967295-4294967295-9223372036854775807"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := gtid.ParsePos(tt.in)
			if err != nil {
				t.Fatalf("ParsePos(%q): %v", tt.in, err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseMariaDBErrors(t *testing.T) {
	tests := []struct {
		name, in string
		state    bool // ParseBinlogState instead of ParsePos
		inMsg    string
	}{
		{"duplicate domain", "0-1-100,0-2-5", false, "duplicate domain 0"},
		{"duplicate domain-server", "0-1-100,0-1-5", true, "duplicate domain-server 0-1"},
		{"two parts", "0-100", false, "want domain-server-seq"},
		{"four parts", "0-1-2-3", true, "want domain-server-seq"},
		{"zero seq", "0-1-0", false, "sequence number 0"},
		{"seq overflow", "0-1-9223372036854775808", true, "overflows"},
		{"domain overflow", "4294967296-1-1", false, "domain id"},
		{"server overflow", "0-4294967296-1", true, "server id"},
		{"empty domain", "-1-1", false, "domain id"},
		{"letters", "a-b-c", false, "domain id"},
		{"trailing comma", "0-1-1,", true, "expected a MariaDB GTID"},
		{"empty entry", "0-1-1,,1-1-1", false, "expected a MariaDB GTID"},
		{"colon", "0-1-1:5", false, "expected ','"},
		{"space inside", "0-1 -1", true, "want domain-server-seq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.state {
				_, err = gtid.ParseBinlogState(tt.in)
			} else {
				_, err = gtid.ParsePos(tt.in)
			}
			if !errors.Is(err, gtid.ErrSyntax) {
				t.Fatalf("error = %v, want ErrSyntax", err)
			}
			if !strings.Contains(err.Error(), tt.inMsg) {
				t.Errorf("error %q does not mention %q", err, tt.inMsg)
			}
		})
	}
}

func TestParseGTID(t *testing.T) {
	g, err := gtid.ParseGTID(" 1-2-3 ")
	if err != nil || g != (gtid.GTID{Domain: 1, Server: 2, Seq: 3}) || g.String() != "1-2-3" {
		t.Errorf("ParseGTID = %v, %v", g, err)
	}
	for _, bad := range []string{"", "1-2-3,4-5-6", "1-2", "1-2-3 x"} {
		if _, err := gtid.ParseGTID(bad); !errors.Is(err, gtid.ErrSyntax) {
			t.Errorf("ParseGTID(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestPosHasReached(t *testing.T) {
	tests := []struct {
		name, ours, target string
		want               bool
	}{
		{"empty target", "", "", true},
		{"empty target, some ours", "0-1-5", "", true},
		{"equal", "0-1-100", "0-1-100", true},
		{"ahead", "0-1-101", "0-1-100", true},
		{"behind", "0-1-99", "0-1-100", false},
		{"server ignored", "0-2-100", "0-1-100", true},
		{"missing domain", "0-1-100", "0-1-100,1-1-1", false},
		{"extra domain ours", "0-1-100,1-1-1", "0-1-100", true},
		{"one domain behind", "0-1-100,1-1-4", "0-1-50,1-1-5", false},
		{"all domains ahead", "0-1-100,1-1-9", "1-1-5,0-1-50", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours, target := mustPos(t, tt.ours), mustPos(t, tt.target)
			if got := ours.HasReached(target); got != tt.want {
				t.Errorf("%q.HasReached(%q) = %v, want %v", tt.ours, tt.target, got, tt.want)
			}
		})
	}
}

func TestPosLiteralsUnsorted(t *testing.T) {
	p := gtid.Pos{{Domain: 3, Server: 1, Seq: 7}, {Domain: 1, Server: 2, Seq: 9}}
	if got := p.String(); got != "1-2-9,3-1-7" {
		t.Errorf("String() = %q", got)
	}
	if p[0].Domain != 3 {
		t.Error("String() reordered the receiver")
	}
	if g, ok := p.Domain(1); !ok || g.Seq != 9 {
		t.Errorf("Domain(1) = %v, %v", g, ok)
	}
}

func TestBinlogState(t *testing.T) {
	tests := []struct {
		name, in, canon, set, pos string
	}{
		{"empty", "", "", "", ""},
		{"single server", "0-1-100", "0-1-100", "0-1:1-100", "0-1-100"},
		{"failover", "0-2-50,0-1-100", "0-2-50,0-1-100", "0-1:51-100,0-2:1-50", "0-1-100"},
		{"errant local write", "0-1-100,0-2-50,0-3-101", "0-2-50,0-1-100,0-3-101", "0-1:51-100,0-2:1-50,0-3:101", "0-3-101"},
		{"two domains", "1-7-5,0-1-10,1-8-9", "0-1-10,1-7-5,1-8-9", "0-1:1-10,1-7:1-5,1-8:6-9", "0-1-10,1-8-9"},
		{"tie (non-strict)", "0-3-100,0-1-100", "0-1-100,0-3-100", "0-1:1-100,0-3:100", "0-1-100"},
		{"whitespace", " 0-1-3 ,\n0-2-5", "0-1-3,0-2-5", "0-1:1-3,0-2:4-5", "0-2-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := gtid.ParseBinlogState(tt.in)
			if err != nil {
				t.Fatalf("ParseBinlogState(%q): %v", tt.in, err)
			}
			if got := b.String(); got != tt.canon {
				t.Errorf("String() = %q, want %q", got, tt.canon)
			}
			if got := b.Set(); !got.Equal(gtid.MustParseSet(tt.set)) {
				t.Errorf("Set() = %q, want %q", got, tt.set)
			}
			if got := b.Pos().String(); got != tt.pos {
				t.Errorf("Pos() = %q, want %q", got, tt.pos)
			}
			for _, g := range b { // every listed GTID is in the derived set
				one := gtid.MustParseSet(fmt.Sprintf("%d-%d:%d", g.Domain, g.Server, g.Seq))
				if !b.Set().Contains(one) {
					t.Errorf("Set() lacks listed GTID %v", g)
				}
			}
		})
	}
}

func TestBinlogStateLiteral(t *testing.T) {
	// Unsorted, repeated pair and seq 0: normalized, never a panic.
	b := gtid.BinlogState{{0, 2, 7}, {0, 1, 3}, {0, 2, 5}, {1, 1, 0}}
	if got := b.Set().String(); got != "0-1:1-3,0-2:4-7" {
		t.Errorf("Set() = %q", got)
	}
	if got := b.Pos().String(); got != "0-2-7" {
		t.Errorf("Pos() = %q", got)
	}
	if got := b.String(); got != "0-1-3,0-2-5,0-2-7,1-1-0" {
		t.Errorf("String() = %q", got)
	}
}

func TestPosFromSet(t *testing.T) {
	tests := []struct{ name, set, want string }{
		{"empty", "", ""},
		{"one server", "0-1:1-100", "0-1-100"},
		{"highest seq wins", "0-1:51-100,0-2:1-50", "0-1-100"},
		{"gap", "0-2:1-50:200", "0-2-200"},
		{"two domains", "1-8:6-9,0-1:1-10,1-7:1-5", "0-1-10,1-8-9"},
		{"tie takes lowest server", "0-3:100,0-1:1-100", "0-1-100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := gtid.PosFromSet(gtid.MustParseSet(tt.set))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("PosFromSet = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := gtid.PosFromSet(gtid.MustParseSet("0-1:1," + u1 + ":1")); !errors.Is(err, gtid.ErrNotMariaDB) {
		t.Errorf("PosFromSet with a uuid: error = %v, want ErrNotMariaDB", err)
	}
}

func TestBinlogStateSetPosRoundTrip(t *testing.T) {
	for _, in := range []string{"0-1-100", "0-2-50,0-1-100,1-3-4", "0-1-100,0-2-50,0-3-101"} {
		b := mustState(t, in)
		p, err := gtid.PosFromSet(b.Set())
		if err != nil || p.String() != b.Pos().String() {
			t.Errorf("%q: PosFromSet(Set()) = %q, %v; Pos() = %q", in, p, err, b.Pos())
		}
	}
}

func TestMariaDBErrant(t *testing.T) {
	tests := []struct{ name, state, slavePos, want string }{
		{"caught up", "0-1-100", "0-1-100", ""},
		{"caught up after failover", "0-2-50,0-1-100", "0-1-100", ""},
		{"one local write", "0-1-100,0-3-101", "0-1-100", "0-3:101"},
		{"several local writes", "0-1-100,0-3-105", "0-1-100", "0-3:101-105"},
		{"local domain not replicated", "0-1-100,5-3-2", "0-1-100", "5-3:1-2"},
		{"slave pos ahead of binlog", "0-1-90", "0-1-100", ""},
		{"empty slave pos", "0-1-3", "", "0-1:1-3"},
		{"empty state", "", "0-1-100", ""},
		{"tie at replicated seq", "0-1-100,0-3-100", "0-1-100", "0-3:100"},
		{"errant in one of two domains", "0-1-100,1-2-7,1-3-8", "0-1-100,1-2-7", "1-3:8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gtid.MariaDBErrant(mustState(t, tt.state), mustPos(t, tt.slavePos))
			if !got.Equal(gtid.MustParseSet(tt.want)) {
				t.Errorf("MariaDBErrant = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBinlogErrant(t *testing.T) {
	tests := []struct{ name, replica, source, want string }{
		{"identical", "0-2-50,0-1-100", "0-2-50,0-1-100", ""},
		{"lagging", "0-1-80", "0-1-100", ""},
		{"lagging across failback", "0-1-20", "0-1-100,0-2-50", ""},
		{"local write", "0-1-100,0-3-101", "0-1-100", "0-3:101"},
		{"old primary tail", "0-1-50", "0-1-47,0-2-100", "0-1:48-50"},
		{"unknown server", "0-9-3", "0-1-100", "0-9:1-3"},
		{"other domain", "0-1-5,1-1-5", "0-1-100", "1-1:1-5"},
		{"empty replica", "", "0-1-100", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gtid.BinlogErrant(mustState(t, tt.replica), mustState(t, tt.source))
			if !got.Equal(gtid.MustParseSet(tt.want)) {
				t.Errorf("BinlogErrant = %q, want %q", got, tt.want)
			}
		})
	}
}

func mustPos(t *testing.T, s string) gtid.Pos {
	t.Helper()
	p, err := gtid.ParsePos(s)
	if err != nil {
		t.Fatalf("ParsePos(%q): %v", s, err)
	}
	return p
}

func mustState(t *testing.T, s string) gtid.BinlogState {
	t.Helper()
	b, err := gtid.ParseBinlogState(s)
	if err != nil {
		t.Fatalf("ParseBinlogState(%q): %v", s, err)
	}
	return b
}
