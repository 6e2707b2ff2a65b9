package gtid_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

const (
	u1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	u2 = "8a94f357-aab4-11df-86ab-c80aa9429563"
)

func TestParseSetCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
		count          uint64
	}{
		{"empty", "", "", 0},
		{"only whitespace", " \n\t ", "", 0},
		{"single", u1 + ":5", u1 + ":5", 1},
		{"range", u1 + ":1-5", u1 + ":1-5", 5},
		{"bare uuid adds nothing", u1, "", 0},
		{"uppercase uuid", strings.ToUpper(u1) + ":1", u1 + ":1", 1},
		{"merge adjacent", u1 + ":1-5:6-9", u1 + ":1-9", 9},
		{"merge overlapping unsorted", u1 + ":7-9:1-5:4-7", u1 + ":1-9", 9},
		{"keep gap", u1 + ":1-5:7-9", u1 + ":1-5:7-9", 8},
		{"sources sorted", u2 + ":3," + u1 + ":1", u1 + ":1," + u2 + ":3", 2},
		{"repeated source merged", u1 + ":1-2," + u2 + ":1," + u1 + ":3", u1 + ":1-3," + u2 + ":1", 4},
		{"mysql newlines", u1 + ":1-5,\n" + u2 + ":1-3", u1 + ":1-5," + u2 + ":1-3", 8},
		{"spaces around separators", " " + u1 + " : 1-5 : 7 ,\r\n " + u2 + " :2 ", u1 + ":1-5:7," + u2 + ":2", 7},
		{"tagged", u1 + ":tag:1-5", u1 + ":tag:1-5", 5},
		{"tag switches", u1 + ":1-3:tag:1-5:7:other:2", u1 + ":1-3:other:2:tag:1-5:7", 10},
		{"tag case folded", u1 + ":TaG_1:1", u1 + ":tag_1:1", 1},
		{"underscore tag", u1 + ":_x:1", u1 + ":_x:1", 1},
		{"tags across entries", u1 + ":b:1," + u1 + ":a:2," + u1 + ":3", u1 + ":3:a:2:b:1", 3},
		{"mariadb derived", "0-2:51-100,0-1:1-50", "0-1:1-50,0-2:51-100", 100},
		{"mariadb numeric order", "10-1:1,2-1:1,2-10:2,2-9:3", "2-1:1,2-9:3,2-10:2,10-1:1", 4},
		{"mariadb before mysql", u1 + ":1,0-1:1", "0-1:1," + u1 + ":1", 2},
		{"max seq", u1 + ":9223372036854775807", u1 + ":9223372036854775807", 1},
		{"leading zeros", u1 + ":007-010", u1 + ":7-10", 4},
		{"huge count", u1 + ":1-9223372036854775807", u1 + ":1-9223372036854775807", 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := gtid.ParseSet(tt.in)
			if err != nil {
				t.Fatalf("ParseSet(%q): %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := s.Count(); got != tt.count {
				t.Errorf("Count() = %d, want %d", got, tt.count)
			}
			if s.IsEmpty() != (tt.count == 0) {
				t.Errorf("IsEmpty() = %v with count %d", s.IsEmpty(), tt.count)
			}
			again := gtid.MustParseSet(s.String())
			if !again.Equal(s) || again.String() != s.String() {
				t.Errorf("round trip: %q became %q", s, again)
			}
		})
	}
}

func TestParseSetErrors(t *testing.T) {
	tests := []struct {
		name, in string
		offset   int
		inMsg    string
	}{
		{"garbage", "x", 0, "malformed source id"},
		{"short uuid", "3e11fa47-71ca-11e1-9e33:1", 0, "malformed source id"},
		{"bad hex", "3e11fa47-71ca-11e1-9e33-c80aa942956g:1", 0, "malformed source id"},
		{"misplaced hyphen", "3e11fa4-771ca-11e1-9e33-c80aa9429562:1", 0, "malformed source id"},
		{"braced uuid", "{" + u1 + "}:1", 0, "malformed source id"},
		{"end below start", u1 + ":5-1", 37, "below its start"},
		{"zero seq", u1 + ":0", 37, "sequence number 0"},
		{"zero start", u1 + ":0-5", 37, "sequence number 0"},
		{"overflow", u1 + ":9223372036854775808", 37, "overflows"},
		{"overflow uint64", u1 + ":1-99999999999999999999", 37, "overflows"},
		{"negative", u1 + ":-1", 37, "malformed sequence number"},
		{"plus sign", u1 + ":+1", 37, "malformed sequence number"},
		{"two hyphens", u1 + ":1-2-3", 37, "malformed sequence number"},
		{"open range", u1 + ":1-", 37, "malformed sequence number"},
		{"trailing colon", u1 + ":1:", 39, "expected an interval or tag"},
		{"double colon", u1 + "::1", 37, "expected an interval or tag"},
		{"trailing comma", u1 + ":1,", 39, "expected a source id"},
		{"empty entry", u1 + ":1,," + u2 + ":1", 39, "expected a source id"},
		{"leading comma", "," + u1 + ":1", 0, "expected a source id"},
		{"leading colon", ":1", 0, "expected a source id"},
		{"space inside interval", u1 + ":1 -5", 39, "expected ',' or end"},
		{"tag without intervals", u1 + ":tag", 37, "tag has no intervals"},
		{"tag then tag", u1 + ":a:b:1", 37, "tag has no intervals"},
		{"tag too long", u1 + ":" + strings.Repeat("a", 33) + ":1", 37, "longer than 32"},
		{"tag bad char", u1 + ":ta-g:1", 37, "malformed tag"},
		{"tag on mariadb", "0-1:tag:1", 4, "cannot have tags"},
		{"domain overflow", "4294967296-1:1", 0, "domain id out of range"},
		{"server overflow", "0-4294967296:1", 0, "server id out of range"},
		{"mariadb triple", "0-1-5:1", 0, "malformed source id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gtid.ParseSet(tt.in)
			if !errors.Is(err, gtid.ErrSyntax) {
				t.Fatalf("ParseSet(%q) error = %v, want ErrSyntax", tt.in, err)
			}
			var se *gtid.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Offset != tt.offset {
				t.Errorf("offset = %d, want %d (%v)", se.Offset, tt.offset, err)
			}
			if !strings.Contains(err.Error(), tt.inMsg) {
				t.Errorf("error %q does not mention %q", err, tt.inMsg)
			}
		})
	}
}

func TestSyntaxErrorTruncatesToken(t *testing.T) {
	_, err := gtid.ParseSet(strings.Repeat("z", 1000))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("want a short error, got %v", err)
	}
}

func TestMustParseSetPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustParseSet did not panic on bad input")
		}
	}()
	gtid.MustParseSet("nope")
}

func TestSourcesAndIntervals(t *testing.T) {
	s := gtid.MustParseSet(u1 + ":1-3:7:tag:2,0-1:5")
	wantSrc := []string{"0-1", u1, u1 + ":tag"}
	if got := s.Sources(); strings.Join(got, " ") != strings.Join(wantSrc, " ") {
		t.Errorf("Sources() = %v, want %v", got, wantSrc)
	}
	ivs := s.Intervals(u1)
	if len(ivs) != 2 || ivs[0] != (gtid.Interval{Start: 1, End: 3}) || ivs[1] != (gtid.Interval{Start: 7, End: 7}) {
		t.Errorf("Intervals(u1) = %v", ivs)
	}
	ivs[0].End = 100 // a copy: must not change s
	if got := s.String(); got != "0-1:5,"+u1+":1-3:7:tag:2" {
		t.Errorf("set changed through Intervals copy: %q", got)
	}
	if s.Intervals("nope") != nil {
		t.Error("Intervals of an absent source is not nil")
	}
}

func TestSyntaxErrorEndOfInput(t *testing.T) {
	_, err := gtid.ParseSet(u1 + ":1,")
	want := "gtid: syntax error at offset 39 (end of input): expected a source id (uuid or domain-server)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	_, err = gtid.ParseSet(u1 + ":5-1")
	want = `gtid: syntax error at offset 37, token "5-1": interval end 1 is below its start 5`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
