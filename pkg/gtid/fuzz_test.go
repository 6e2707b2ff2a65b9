package gtid_test

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Seed inputs live in testdata/fuzz/<FuzzName>/.

// checkParseErr asserts that a parse error is a well-formed *SyntaxError.
func checkParseErr(t *testing.T, in string, err error) {
	t.Helper()
	var se *gtid.SyntaxError
	if !errors.Is(err, gtid.ErrSyntax) || !errors.As(err, &se) {
		t.Fatalf("%q: error %v is not a *SyntaxError wrapping ErrSyntax", in, err)
	}
	if se.Offset < 0 || se.Offset > len(in) {
		t.Fatalf("%q: error offset %d outside the input: %v", in, se.Offset, err)
	}
}

func FuzzParseSet(f *testing.F) {
	f.Add(u1 + ":1-5:7-9:tag:1," + u2 + ":3")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := gtid.ParseSet(in)
		if err != nil {
			checkParseErr(t, in, err)
			return
		}
		again, err := gtid.ParseSet(s.String())
		if err != nil || !again.Equal(s) || again.String() != s.String() {
			t.Fatalf("%q: canonical %q does not round-trip: %v", in, s, err)
		}
		if !s.Union(s).Equal(s) || !s.Subtract(s).IsEmpty() || gtid.Compare(s, s) != gtid.Equal {
			t.Fatalf("%q: set algebra broken on itself: %q", in, s)
		}
		if s.IsEmpty() != (s.Count() == 0) {
			t.Fatalf("%q: IsEmpty %v but Count %d", in, s.IsEmpty(), s.Count())
		}
		if _, err := gtid.PosFromSet(s); err != nil && !errors.Is(err, gtid.ErrNotMariaDB) {
			t.Fatalf("%q: PosFromSet: unexpected error %v", in, err)
		}
	})
}

func FuzzParsePos(f *testing.F) {
	f.Add("0-1-100,1-2-5")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := gtid.ParsePos(in)
		if err != nil {
			checkParseErr(t, in, err)
			return
		}
		for i := 1; i < len(p); i++ {
			if p[i-1].Domain >= p[i].Domain {
				t.Fatalf("%q: result not sorted by unique domain: %v", in, p)
			}
		}
		again, err := gtid.ParsePos(p.String())
		if err != nil || again.String() != p.String() {
			t.Fatalf("%q: canonical %q does not round-trip: %v", in, p, err)
		}
		if !p.HasReached(p) || !p.HasReached(nil) {
			t.Fatalf("%q: position has not reached itself", in)
		}
	})
}

func FuzzParseBinlogState(f *testing.F) {
	f.Add("0-1-100,0-2-50")
	f.Fuzz(func(t *testing.T, in string) {
		b, err := gtid.ParseBinlogState(in)
		if err != nil {
			checkParseErr(t, in, err)
			return
		}
		again, err := gtid.ParseBinlogState(b.String())
		if err != nil || again.String() != b.String() {
			t.Fatalf("%q: canonical %q does not round-trip: %v", in, b, err)
		}
		set := b.Set()
		if parsed, err := gtid.ParseSet(set.String()); err != nil || !parsed.Equal(set) {
			t.Fatalf("%q: derived set %q does not round-trip: %v", in, set, err)
		}
		pos, err := gtid.PosFromSet(set)
		if err != nil || pos.String() != b.Pos().String() {
			t.Fatalf("%q: PosFromSet(Set()) = %q, Pos() = %q, %v", in, pos, b.Pos(), err)
		}
		if e := gtid.BinlogErrant(b, b); !e.IsEmpty() {
			t.Fatalf("%q: BinlogErrant against itself = %q", in, e)
		}
		if e := gtid.MariaDBErrant(b, nil); !e.Equal(set) {
			t.Fatalf("%q: with no slave pos everything is errant; got %q", in, e)
		}
		if !set.Contains(gtid.MariaDBErrant(b, b.Pos())) {
			t.Fatalf("%q: errant GTIDs outside the history", in)
		}
	})
}
