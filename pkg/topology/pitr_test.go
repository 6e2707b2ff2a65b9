package topology

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

func pos(t *testing.T, s string) gtid.Pos {
	t.Helper()
	p, err := gtid.ParsePos(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanPITR(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	file := func(site, name, start, end string, first, last int) ArchivedBinlog {
		return ArchivedBinlog{Site: site, File: name, Start: pos(t, start), End: pos(t, end), First: at(first), Last: at(last)}
	}
	// iad wrote 1-100 in two files, then failed over to pdx, whose first
	// file repeats 81-100 (replicated) and goes on to 150.
	iad1 := file("iad", "mysql-bin.000001", "", "0-1-50", 0, 50)
	iad2 := file("iad", "mysql-bin.000002", "0-1-50", "0-1-100", 50, 100)
	pdx1 := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-150", 80, 150)
	archive := []ArchivedBinlog{pdx1, iad2, iad1}
	cases := []struct {
		name   string
		files  []ArchivedBinlog
		base   string
		stop   int
		target int
		want   []string
		err    error
	}{
		{name: "inside the first file", files: archive, base: "0-1-20", stop: 20, target: 30, want: []string{"iad/mysql-bin.000001"}},
		{name: "across the failover", files: archive, base: "0-1-20", stop: 20, target: 120,
			want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000002", "pdx/mysql-bin.000001"}},
		{name: "the new primary's file overlaps", files: archive, base: "0-1-90", stop: 90, target: 140,
			want: []string{"pdx/mysql-bin.000001"}},
		{name: "at the last event", files: archive, base: "0-1-20", stop: 20, target: 150,
			want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000002", "pdx/mysql-bin.000001"}},
		{name: "after the last event", files: archive, base: "0-1-20", stop: 20, target: 151, err: ErrOutsideWindow},
		{name: "before the backup ended", files: archive, base: "0-1-20", stop: 20, target: 19, err: ErrOutsideWindow},
		{name: "a missing file", files: []ArchivedBinlog{iad1, pdx1}, base: "0-1-20", stop: 20, target: 120, err: ErrArchiveGap},
		{name: "nothing archived", base: "0-1-20", stop: 20, target: 30, err: ErrOutsideWindow},
		{name: "the target is the backup", files: archive, base: "0-1-100", stop: 100, target: 100,
			want: []string{"pdx/mysql-bin.000001"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := PlanPITR(c.files, pos(t, c.base), at(c.stop), at(c.target))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("want %v, got %v (plan %+v)", c.err, err, plan)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range plan.Files {
				got = append(got, f.Site+"/"+f.File)
			}
			if len(got) != len(c.want) {
				t.Fatalf("files %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("files %v, want %v", got, c.want)
				}
			}
		})
	}
}
