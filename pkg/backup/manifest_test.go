package backup

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseInfo(t *testing.T) {
	cases := []struct {
		name string
		text string
		want Coordinates
		err  bool
	}{
		{name: "with its end time", text: "start_time = 2026-11-24 19:50:01\nend_time = 2026-11-24 19:50:07\nbinlog_pos = filename 'b.000002', position '9', GTID of the last change '0-1-5'\n",
			want: Coordinates{File: "b.000002", Offset: 9, Position: "0-1-5", EndTime: time.Date(2026, 11, 24, 19, 50, 7, 0, time.UTC)}},
		{name: "with a GTID", text: "tool_name = mariabackup\nbinlog_pos = filename 'mysql-bin.000003', position '1234', GTID of the last change '0-1-57'\ninnodb_to_lsn = 9\n",
			want: Coordinates{File: "mysql-bin.000003", Offset: 1234, Position: "0-1-57"}},
		{name: "several domains", text: "binlog_pos = filename 'b.000001', position '4', GTID of the last change '0-1-5,1-2-7'",
			want: Coordinates{File: "b.000001", Offset: 4, Position: "0-1-5,1-2-7"}},
		{name: "no GTID written yet", text: "binlog_pos = filename 'b.000001', position '329'",
			want: Coordinates{File: "b.000001", Offset: 329}},
		{name: "binlog off", text: "tool_name = mariabackup\nformat = xbstream\n", err: true},
		{name: "empty", text: "", err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseInfo(c.text)
			if c.err {
				if !errors.Is(err, ErrNoPosition) {
					t.Fatalf("want ErrNoPosition, got %v %+v", err, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestManifestValidate(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	good := Manifest{Version: ManifestVersion, ID: "b1", Namespace: "shop", Group: "orders", Site: "iad", Method: "mariadb-backup",
		StartTime: t0, StopTime: t0.Add(time.Minute), Data: "shop/orders/base/b1/data-0123456789abcdef.xbstream.zst", Compression: "zstd",
		Size: 10, SHA256: strings.Repeat("a", 64)}
	cases := []struct {
		name   string
		change func(*Manifest)
		ok     bool
	}{
		{name: "whole", change: func(*Manifest) {}, ok: true},
		{name: "another version", change: func(m *Manifest) { m.Version = 2 }},
		{name: "data under another backup", change: func(m *Manifest) {
			m.Data = "shop/orders/base/b2/data-0123456789abcdef.xbstream.zst"
		}},
		{name: "data under a longer id", change: func(m *Manifest) {
			m.Data = "shop/orders/base/b1x/data-0123456789abcdef.xbstream.zst"
		}},
		{name: "data in a subfolder", change: func(m *Manifest) {
			m.Data = "shop/orders/base/b1/x/data-0123456789abcdef.xbstream.zst"
		}},
		{name: "data named otherwise", change: func(m *Manifest) { m.Data = "shop/orders/base/b1/manifest.json" }},
		{name: "a path in the id", change: func(m *Manifest) { m.ID = "../b1" }},
		{name: "no size", change: func(m *Manifest) { m.Size = 0 }},
		{name: "short hash", change: func(m *Manifest) { m.SHA256 = "abc" }},
		{name: "unknown compression", change: func(m *Manifest) { m.Compression = "gzip" }},
		{name: "stopped before it started", change: func(m *Manifest) { m.StopTime = t0.Add(-time.Second) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := good
			c.change(&m)
			err := m.Validate()
			if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}
