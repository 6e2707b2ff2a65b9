package backup

import (
	"strings"
	"testing"
	"time"
)

// TestScanFollowsHeaders feeds mariadb-binlog's text in small chunks, with
// a row event's base64 far longer than any header, and checks what the
// scan noted.
func TestScanFollowsHeaders(t *testing.T) {
	text := strings.Join([]string{
		"# at 4",
		"#261124 19:50:01 server id 1  end_log_pos 256 CRC32 0x1 \tStart: binlog v 4, server v 10.11.19",
		"# at 256",
		"#261124 19:50:01 server id 1  end_log_pos 299 CRC32 0x2 \tGtid list [0-2-80,0-1-75]",
		"#261124 19:50:03 server id 2  end_log_pos 341 CRC32 0x3 \tGTID 0-2-81 trans",
		"BINLOG '" + strings.Repeat("QUJD", 5000) + "'/*!*/;",
		"#261124 19:50:09 server id 2  end_log_pos 390 CRC32 0x4 \tGTID 0-2-82 trans",
		"#261124 19:50:09 server id 2  end_log_pos 400 CRC32 0x5 \tXid = 12",
		"",
	}, "\n")
	s := &scan{}
	for len(text) > 0 {
		k := min(7, len(text))
		if _, err := s.Write([]byte(text[:k])); err != nil {
			t.Fatal(err)
		}
		text = text[k:]
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	at := func(sec int) time.Time { return time.Date(2026, 11, 24, 19, 50, sec, 0, time.UTC) }
	if s.start.String() != "0-2-80" || s.last.String() != "0-2-82" || s.events != 2 ||
		!s.first.Equal(at(3)) || !s.lastTime.Equal(at(9)) {
		t.Fatalf("scan: start %s last %s events %d first %s last %s", s.start, s.last, s.events, s.first, s.lastTime)
	}
}
