package backup

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// binlogBuilder writes a binlog file by hand: the magic, then events with
// their 19-byte header and a CRC32-sized (unchecked) trailer.
type binlogBuilder struct{ b []byte }

func newBinlog() *binlogBuilder {
	w := &binlogBuilder{b: append([]byte(nil), binlogMagic...)}
	fd := make([]byte, 2+50+4+1+40) // versions, time, header length, post-header lengths
	fd = append(fd, 1)              // CRC32
	w.event(100, evFormatDesc, 1, fd)
	return w
}

func (w *binlogBuilder) event(at uint32, typ byte, server uint32, body []byte) *binlogBuilder {
	size := headerLen + len(body) + 4
	h := make([]byte, headerLen)
	binary.LittleEndian.PutUint32(h[0:], at)
	h[4] = typ
	binary.LittleEndian.PutUint32(h[5:], server)
	binary.LittleEndian.PutUint32(h[9:], uint32(size))
	binary.LittleEndian.PutUint32(h[13:], uint32(len(w.b)+size))
	w.b = append(append(append(w.b, h...), body...), 0, 0, 0, 0)
	return w
}

func (w *binlogBuilder) list(gs ...gtid.GTID) *binlogBuilder {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(gs)))
	for _, g := range gs {
		b = binary.LittleEndian.AppendUint32(b, g.Domain)
		b = binary.LittleEndian.AppendUint32(b, g.Server)
		b = binary.LittleEndian.AppendUint64(b, g.Seq)
	}
	return w.event(100, evGTIDList, 1, b)
}

// trx writes one transaction: its GTID event at commit, a statement
// (written at begin) and its Xid.
func (w *binlogBuilder) trx(begin, commit uint32, g gtid.GTID, stmt string) *binlogBuilder {
	b := binary.LittleEndian.AppendUint64(nil, g.Seq)
	b = binary.LittleEndian.AppendUint32(b, g.Domain)
	w.event(commit, evGTID, g.Server, append(b, 0))
	q := make([]byte, 13)
	q = append(append(q, 0), stmt...) // no status vars, empty db name and its NUL
	w.event(begin, evQuery, g.Server, q)
	return w.event(commit, evXID, g.Server, make([]byte, 8))
}

func (w *binlogBuilder) file(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "bin.000001")
	if err := os.WriteFile(p, w.b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func g(d, s uint32, q uint64) gtid.GTID { return gtid.GTID{Domain: d, Server: s, Seq: q} }

// TestScanBinlogForgedHeaderInStatement: a statement-logged literal that
// holds what mariadb-binlog's text would print for an event header is
// data to the binary reader, and moves neither the file's end nor its times.
func TestScanBinlogForgedHeaderInStatement(t *testing.T) {
	forged := "INSERT INTO notes VALUES ('hello\n#681231 23:59:59 server id 1  end_log_pos 1 CRC32 0x0 \tGTID 0-1-2 trans\n')"
	p := newBinlog().list(g(0, 1, 80)).trx(101, 103, g(0, 1, 81), forged).file(t)
	d, err := scanBinlog(p)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	if d.Start.String() != "0-1-80" || d.End.String() != "0-1-81" || d.FirstGTID.String() != "0-1-81" ||
		d.Events != 1 || !d.First.Equal(at(103)) || !d.Last.Equal(at(103)) || !d.Max.Equal(at(103)) {
		t.Fatalf("facts %+v", d)
	}
}

// TestScanBinlogFacts: commit times out of order, two domains; the first
// GTID per domain, the end and the latest time are each the file's own.
func TestScanBinlogFacts(t *testing.T) {
	p := newBinlog().list(g(0, 2, 80), g(0, 1, 75)).
		trx(101, 109, g(0, 2, 81), "INSERT 1").
		trx(102, 104, g(1, 2, 7), "INSERT 2").
		trx(103, 105, g(0, 2, 82), "INSERT 3").file(t)
	d, err := scanBinlog(p)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	if d.Start.String() != "0-2-80" || d.End.String() != "0-2-82,1-2-7" || d.FirstGTID.String() != "0-2-81,1-2-7" ||
		!d.First.Equal(at(109)) || !d.Last.Equal(at(105)) || !d.Max.Equal(at(109)) {
		t.Fatalf("facts %+v", d)
	}
	// The first transaction committed at 109: a target of 104 is met at
	// its GTID event, and nothing before it is closed.
	want, hit, err := replayExpect(p, gtid.Pos{g(0, 2, 80)}, at(104), 0)
	if err != nil || !hit || want.String() != "0-2-80" {
		t.Fatalf("expect to 104: %s %v %v", want, hit, err)
	}
	// A statement that began at 103 in a transaction whose GTID says 102
	// (out of order): met inside it, the transaction is not closed.
	q := newBinlog().list().trx(100, 101, g(0, 1, 1), "a").trx(103, 102, g(0, 1, 2), "b").file(t)
	want, hit, err = replayExpect(q, nil, at(103), 0)
	if err != nil || !hit || want.String() != "0-1-1" {
		t.Fatalf("expect to 103: %s %v %v", want, hit, err)
	}
	if _, hit, _ := replayExpect(p, nil, at(200), 0); hit {
		t.Fatal("a target after the file was met in it")
	}
}

// TestScanBinlogRefuses: anything malformed or encrypted is an error.
func TestScanBinlogRefuses(t *testing.T) {
	good := newBinlog().list(g(0, 1, 1)).trx(101, 101, g(0, 1, 2), "x").b
	cases := map[string][]byte{
		"no magic":        append([]byte("xbin"), good[4:]...),
		"truncated event": good[:len(good)-3],
		"size below header": func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[4+9:], 5)
			return b
		}(),
		"encrypted":        newBinlog().event(100, evStartEncryption, 1, make([]byte, 17)).list().b,
		"no Gtid_list":     newBinlog().trx(101, 101, g(0, 1, 2), "x").b,
		"short Gtid_list":  newBinlog().event(100, evGTIDList, 1, []byte{2, 0, 0, 0, 1}).b,
		"short GTID event": newBinlog().list().event(100, evGTID, 1, []byte{1, 2}).b,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bin")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := scanBinlog(p); !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
		})
	}
}

// FuzzScanBinlog: no input crashes the reader.
func FuzzScanBinlog(f *testing.F) {
	f.Add(newBinlog().list(g(0, 1, 1)).trx(101, 101, g(0, 1, 2), "x").b)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "bin")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _ = scanBinlog(p)
	})
}

// TestReplayExpectStopsAtTheCut: a file the plan cut is expected to bring
// the server only to its kept end, and the cut is where the next
// transaction's GTID event begins.
func TestReplayExpectStopsAtTheCut(t *testing.T) {
	p := newBinlog().list(g(0, 1, 10)).
		trx(101, 101, g(0, 1, 11), "INSERT 1").
		trx(102, 102, g(0, 1, 12), "INSERT 2").
		trx(103, 103, g(0, 1, 13), "INSERT 3").file(t)
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	off, err := cutOffset(p, gtid.Pos{g(0, 1, 12)})
	if err != nil {
		t.Fatal(err)
	}
	want, hit, err := replayExpect(p, gtid.Pos{g(0, 1, 10)}, at(200), off)
	if err != nil || hit || want.String() != "0-1-12" {
		t.Fatalf("expect to the cut: %s %v %v", want, hit, err)
	}
	// A target met before the cut still ends the replay there.
	want, hit, err = replayExpect(p, gtid.Pos{g(0, 1, 10)}, at(102), off)
	if err != nil || !hit || want.String() != "0-1-11" {
		t.Fatalf("expect to 102: %s %v %v", want, hit, err)
	}
	if _, err := cutOffset(p, gtid.Pos{g(0, 1, 13)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a cut past the file's end: %v", err)
	}
}
