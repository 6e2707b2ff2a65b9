package backup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// MariaDB binlog file layout, read directly: the text of mariadb-binlog
// prints statement-logged queries verbatim, so a value written by an
// application could pass for an event header there.
const (
	headerLen = 19 // timestamp, type, server id, event size, log pos, flags

	evQuery           = 2
	evFormatDesc      = 15
	evXID             = 16
	evGTID            = 162
	evGTIDList        = 163
	evStartEncryption = 164

	gtidStandalone = 0x01 // FL_STANDALONE: the transaction is one event
	maxEventSize   = 1 << 30
)

var binlogMagic = []byte{0xfe, 'b', 'i', 'n'}

// binlogEvent is what the reader passes on for each event.
type binlogEvent struct {
	At       time.Time
	Type     byte
	ServerID uint32
	// GTID is set on a GTID event; Closes when this event ends the
	// transaction opened by the last GTID event.
	GTID   gtid.GTID
	Closes bool
	// Off is the event's offset in the file.
	Off int64
}

// readBinlog walks a binlog file's events in order, calling fn for each;
// list is called once with the file's Gtid_list. Anything malformed, or
// an encrypted binlog, is an error.
func readBinlog(r io.Reader, list func(gtid.BinlogState), fn func(binlogEvent) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, 4)
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != string(binlogMagic) {
		return fmt.Errorf("%w: not a binlog file (magic %x, %v)", ErrInvalid, magic, err)
	}
	w := walker{}
	var hdr [headerLen]byte
	for off := int64(4); ; {
		if _, err := io.ReadFull(br, hdr[:]); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%w: binlog event at %d: %w", ErrInvalid, off, err)
		}
		size := binary.LittleEndian.Uint32(hdr[9:13])
		if size < headerLen || size > maxEventSize {
			return fmt.Errorf("%w: binlog event at %d has size %d", ErrInvalid, off, size)
		}
		body, err := eventBody(br, hdr[4], int64(size-headerLen))
		if err != nil {
			return fmt.Errorf("%w: binlog event at %d (%d bytes): %w", ErrInvalid, off, size, err)
		}
		ev := binlogEvent{At: time.Unix(int64(binary.LittleEndian.Uint32(hdr[0:4])), 0).UTC(), Type: hdr[4],
			ServerID: binary.LittleEndian.Uint32(hdr[5:9]), Off: off}
		if err := w.event(&ev, body, list); err != nil {
			return fmt.Errorf("%w: binlog event at %d: %w", ErrInvalid, off, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		off += int64(size)
	}
}

// eventBody reads an event's body when its type is one decoded here, and
// skips it otherwise (row events are most of a file). It grows with what
// arrives rather than trusting the declared size.
func eventBody(r io.Reader, typ byte, n int64) ([]byte, error) {
	switch typ {
	case evQuery, evFormatDesc, evXID, evGTID, evGTIDList, evStartEncryption:
		b, err := io.ReadAll(io.LimitReader(r, n))
		if err == nil && int64(len(b)) < n {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	if k, err := io.CopyN(io.Discard, r, n); err != nil {
		return nil, fmt.Errorf("%d of %d bytes: %w", k, n, io.ErrUnexpectedEOF)
	}
	return nil, nil
}

// walker keeps what decoding later events needs: the checksum length
// (from the format description) and whether a transaction is open.
type walker struct {
	checksum   int
	open       bool
	standalone bool
	listSeen   bool
}

func (w *walker) event(ev *binlogEvent, body []byte, list func(gtid.BinlogState)) error {
	switch ev.Type {
	case evStartEncryption:
		return errors.New("the binlog is encrypted")
	case evFormatDesc:
		// binlog version, server version, create time, header length, one
		// post-header length per type, checksum algorithm, checksum.
		if len(body) < 2+50+4+1+5 {
			return fmt.Errorf("format description of %d bytes", len(body))
		}
		if body[len(body)-5] != 0 {
			w.checksum = 4
		}
	case evGTID:
		b := w.payload(body)
		if len(b) < 13 {
			return fmt.Errorf("GTID event of %d bytes", len(b))
		}
		ev.GTID = gtid.GTID{Seq: binary.LittleEndian.Uint64(b[0:8]), Domain: binary.LittleEndian.Uint32(b[8:12]),
			Server: ev.ServerID}
		w.open, w.standalone = true, b[12]&gtidStandalone != 0
	case evGTIDList:
		st, err := decodeGTIDList(w.payload(body))
		if err != nil {
			return err
		}
		if !w.listSeen && list != nil {
			list(st)
		}
		w.listSeen = true
	case evXID:
		ev.Closes = w.open
		w.open = false
	case evQuery:
		ev.Closes = w.open && (w.standalone || isCommit(w.payload(body)))
		if ev.Closes {
			w.open = false
		}
	}
	return nil
}

func (w *walker) payload(body []byte) []byte {
	if len(body) < w.checksum {
		return nil
	}
	return body[:len(body)-w.checksum]
}

// decodeGTIDList reads a Gtid_list event: a count (its low 28 bits), then
// that many (domain, server, seq) triples.
func decodeGTIDList(b []byte) (gtid.BinlogState, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("Gtid_list of %d bytes", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[0:4]) & 0x0fffffff)
	if len(b) < 4+16*n {
		return nil, fmt.Errorf("Gtid_list of %d entries in %d bytes", n, len(b))
	}
	out := make(gtid.BinlogState, 0, n)
	for i := 0; i < n; i++ {
		e := b[4+16*i:]
		out = append(out, gtid.GTID{Domain: binary.LittleEndian.Uint32(e[0:4]),
			Server: binary.LittleEndian.Uint32(e[4:8]), Seq: binary.LittleEndian.Uint64(e[8:16])})
	}
	return out, nil
}

// isCommit tells whether a Query event's statement is COMMIT or ROLLBACK.
// The body: a 13-byte post-header (thread id, exec time, database length,
// error code, status variables' length), the status variables, the
// database name and a NUL, then the statement.
func isCommit(b []byte) bool {
	if len(b) < 13 {
		return false
	}
	dbLen, varsLen := int(b[8]), int(binary.LittleEndian.Uint16(b[11:13]))
	i := 13 + varsLen + dbLen + 1
	if i > len(b) {
		return false
	}
	q := string(b[i:])
	return q == "COMMIT" || q == "ROLLBACK"
}

// binlogFacts is what one file says of itself.
type binlogFacts struct {
	Start gtid.Pos // its Gtid_list
	// FirstGTID is the first GTID per domain; End the state after it.
	FirstGTID, End gtid.Pos
	// First and Last are its first and last events' times (GTID events
	// only); Max the latest time of any event.
	First, Last, Max time.Time
	Events           int
	// Runs are its GTIDs in file order.
	Runs []topology.GTIDRun
	// Size and SHA256 are the file's.
	Size   int64
	SHA256 string
}

// scanBinlog reads a sealed binlog file's facts.
func scanBinlog(path string) (binlogFacts, error) {
	f, err := os.Open(path)
	if err != nil {
		return binlogFacts{}, err
	}
	defer func() { _ = f.Close() }()
	var d binlogFacts
	listed := false
	h := &hashCount{h: sha256.New()}
	err = readBinlog(io.TeeReader(f, h), func(st gtid.BinlogState) { d.Start, listed = st.Pos(), true }, func(ev binlogEvent) error {
		if ev.At.After(d.Max) {
			d.Max = ev.At
		}
		if ev.Type != evGTID {
			return nil
		}
		if _, ok := d.FirstGTID.Domain(ev.GTID.Domain); !ok {
			d.FirstGTID = topology.MaxPos(d.FirstGTID, gtid.Pos{ev.GTID})
		}
		d.End = topology.MaxPos(d.End, gtid.Pos{ev.GTID})
		d.Runs = addToRuns(d.Runs, ev.GTID)
		if d.Events == 0 {
			d.First = ev.At
		}
		d.Last = ev.At
		d.Events++
		return nil
	})
	if err != nil {
		return binlogFacts{}, fmt.Errorf("%s: %w", path, err)
	}
	if !listed {
		return binlogFacts{}, fmt.Errorf("%w: %s has no Gtid_list event", ErrInvalid, path)
	}
	d.End = topology.MaxPos(d.Start, d.End)
	d.Size, d.SHA256 = h.n, hex.EncodeToString(h.h.Sum(nil))
	return d, nil
}

// addToRuns extends the last run of g's domain when g follows it from the
// same server, else starts a run.
func addToRuns(runs []topology.GTIDRun, g gtid.GTID) []topology.GTIDRun {
	for i := len(runs) - 1; i >= 0; i-- {
		r := &runs[i]
		if r.Domain != g.Domain {
			continue
		}
		if r.Server == g.Server && r.To+1 == g.Seq {
			r.To = g.Seq
			return runs
		}
		break
	}
	return append(runs, topology.GTIDRun{Domain: g.Domain, Server: g.Server, From: g.Seq, To: g.Seq})
}

// firstGTIDOffset is the offset of the first GTID event in path that
// match accepts (given each GTID event and its offset), 0 when none does.
func firstGTIDOffset(path string, match func(g gtid.GTID, off int64) bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	var at int64
	errStop := errors.New("stop")
	err = readBinlog(f, nil, func(ev binlogEvent) error {
		if ev.Type == evGTID && match(ev.GTID, ev.Off) {
			at = ev.Off
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return at, nil
}

// cutOffset is the offset of the first GTID event in path past end in its
// domain: where the replay of a file cut at end must stop.
func cutOffset(path string, end gtid.Pos) (int64, error) {
	at, err := firstGTIDOffset(path, func(g gtid.GTID, _ int64) bool { return g.Seq > end.Seq(g.Domain) })
	if err == nil && at == 0 {
		err = fmt.Errorf("%w: %s holds nothing past %s, yet the plan cut it there", ErrInvalid, path, end)
	}
	return at, err
}

// gtidOffsets are the offsets of g's GTID event in path and of the GTID
// event after it (0 when g's transaction is the file's last).
func gtidOffsets(path string, g gtid.GTID) (at, next int64, err error) {
	next, err = firstGTIDOffset(path, func(e gtid.GTID, off int64) bool {
		if at > 0 {
			return true // the GTID event after g's
		}
		if e == g {
			at = off
		}
		return false
	})
	if err == nil && at == 0 {
		err = fmt.Errorf("%w: %s does not hold %s, yet the plan says it does", ErrInvalid, path, g)
	}
	return at, next, err
}

// replayExpect is what replaying path up to target must leave the server
// at: every transaction closed before the first event at or after target
// (none: target zero), or before offset stopAt when that comes first (0:
// no such offset). hit tells whether an event at or after target is met
// (the replay stops).
func replayExpect(path string, from gtid.Pos, target time.Time, stopAt int64) (want gtid.Pos, hit bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }()
	want = from
	var cur gtid.GTID
	errStop := errors.New("stop")
	err = readBinlog(f, nil, func(ev binlogEvent) error {
		if stopAt > 0 && ev.Off >= stopAt {
			return errStop
		}
		if !target.IsZero() && !ev.At.Before(target) {
			hit = true
			return errStop
		}
		if ev.Type == evGTID {
			cur = ev.GTID
		}
		if ev.Closes {
			want = topology.MaxPos(want, gtid.Pos{cur})
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return want, hit, nil
}
