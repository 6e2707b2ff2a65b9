package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// headerLine is an event's header as mariadb-binlog prints it (in UTC,
// with TZ=UTC): "#261124 19:50:05 server id 1  end_log_pos 382 ...".
var headerLine = regexp.MustCompile(`^#(\d{6}\s+\d{1,2}:\d{2}:\d{2})\s+server id \d+\s+end_log_pos \d+`)

var (
	gtidEvent = regexp.MustCompile(`\sGTID (\d+-\d+-\d+)\b`)
	gtidList  = regexp.MustCompile(`\sGtid list \[([^\]]*)\]`)
)

// maxHeader bounds the lines a scan looks at: headers are short, and the
// base64 of row events can run to megabytes.
const maxHeader = 1024

// scan follows mariadb-binlog's text as it passes and notes each event
// header: the file's Gtid_list, and each transaction's GTID and time.
type scan struct {
	start    gtid.Pos
	startSet bool
	last     gtid.Pos // furthest GTID per domain seen
	first    time.Time
	lastTime time.Time
	events   int
	err      error

	line    []byte
	tooLong bool
}

// Write takes the text in any chunks.
func (s *scan) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !s.tooLong && len(s.line)+len(chunk) <= maxHeader {
			s.line = append(s.line, chunk...)
		} else {
			s.tooLong = true
		}
		if i < 0 {
			break
		}
		if !s.tooLong {
			s.header(string(s.line))
		}
		s.line, s.tooLong, p = s.line[:0], false, p[i+1:]
	}
	return n, nil
}

func (s *scan) header(line string) {
	m := headerLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	at, err := time.ParseInLocation("060102 15:04:05", strings.Join(strings.Fields(m[1]), " "), time.UTC)
	if err != nil {
		s.err = fmt.Errorf("binlog header %q: %w", line, err)
		return
	}
	if l := gtidList.FindStringSubmatch(line); l != nil && !s.startSet {
		st, err := gtid.ParseBinlogState(strings.ReplaceAll(l[1], " ", ""))
		if err != nil {
			s.err = fmt.Errorf("binlog Gtid_list %q: %w", l[1], err)
			return
		}
		s.start, s.startSet = st.Pos(), true
		return
	}
	g := gtidEvent.FindStringSubmatch(line)
	if g == nil {
		return
	}
	one, err := gtid.ParsePos(g[1])
	if err != nil {
		s.err = fmt.Errorf("binlog GTID %q: %w", g[1], err)
		return
	}
	s.last = topology.MaxPos(s.last, one)
	if s.events == 0 {
		s.first = at
	}
	s.lastTime = at
	s.events++
}

// binlogTool runs mariadb-binlog on file with args, TZ=UTC, its output to w.
func binlogTool(ctx context.Context, tool, file string, w io.Writer, args ...string) error {
	if tool == "" {
		tool = "mariadb-binlog"
	}
	cmd := exec.CommandContext(ctx, tool, append(args, file)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", tool, file, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// describeBinlog reads a sealed binlog file: its Gtid_list, the state
// after it, and its first and last transactions' times.
func describeBinlog(ctx context.Context, tool, path string) (topology.ArchivedBinlog, error) {
	s := &scan{}
	if err := binlogTool(ctx, tool, path, s); err != nil {
		return topology.ArchivedBinlog{}, err
	}
	if s.err != nil {
		return topology.ArchivedBinlog{}, s.err
	}
	if !s.startSet {
		return topology.ArchivedBinlog{}, fmt.Errorf("%w: %s has no Gtid_list event", ErrInvalid, path)
	}
	return topology.ArchivedBinlog{Start: s.start, End: topology.MaxPos(s.start, s.last), First: s.first,
		Last: s.lastTime}, nil
}
