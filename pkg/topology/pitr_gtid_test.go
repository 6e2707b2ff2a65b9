package topology

import (
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

func TestPlanPITRToGTID(t *testing.T) {
	file := func(site, name, start, end string, first, last int, rs ...string) ArchivedBinlog {
		return archived(t, site, name, start, end, first, last, rs...)
	}
	iad1 := file("iad", "mysql-bin.000001", "", "0-1-50", 0, 50, "0-1-1..50")
	iad2 := file("iad", "mysql-bin.000002", "0-1-50", "0-1-100", 50, 100, "0-1-51..100")
	pdx1 := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-150", 80, 150, "0-1-81..100", "0-2-101..150")
	archive := []ArchivedBinlog{pdx1, iad2, iad1}
	iad3 := file("iad", "mysql-bin.000003", "0-1-50", "0-1-105", 50, 105, "0-1-51..105")
	pdxA := file("pdx", "mysql-bin.000001", "0-1-100", "0-2-103", 100, 110, "0-2-101..103")
	failedOver := []Promotion{{Generation: 2, To: "pdx", ToServer: 2, Position: pos(t, "0-1-100")}}
	g := func(s string) gtid.GTID {
		v, err := gtid.ParseGTID(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name      string
		files     []ArchivedBinlog
		timeline  []Promotion
		base      string
		target    string
		inclusive bool
		want      []string
		err       error
	}{
		{name: "through a transaction in the second file", files: archive, base: "0-1-20", target: "0-1-70",
			inclusive: true, want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000002"}},
		{name: "before the first transaction of a file", files: archive, base: "0-1-20", target: "0-1-51",
			want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000002"}},
		{name: "across the failover", files: archive, base: "0-1-20", target: "0-2-120", inclusive: true,
			want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000002", "pdx/mysql-bin.000001"}},
		{name: "the backup ends on the target", files: archive, base: "0-1-20", target: "0-1-20", inclusive: true},
		{name: "the backup ends just before the target", files: archive, base: "0-1-20", target: "0-1-21"},
		{name: "the backup is past the target", files: archive, base: "0-1-30", target: "0-1-20", err: ErrOutsideWindow},
		{name: "the backup holds the target, exclusive", files: archive, base: "0-1-20", target: "0-1-20",
			err: ErrOutsideWindow},
		{name: "a transaction the group lost", files: []ArchivedBinlog{iad1, iad3, pdxA}, timeline: failedOver,
			base: "0-1-20", target: "0-1-103", inclusive: true, err: ErrOutsideWindow},
		{name: "a lost seq's new transaction", files: []ArchivedBinlog{iad1, iad3, pdxA}, timeline: failedOver,
			base: "0-1-20", target: "0-2-103", inclusive: true,
			want: []string{"iad/mysql-bin.000001", "iad/mysql-bin.000003", "pdx/mysql-bin.000001"}},
		{name: "another server's transaction at a seq the history holds", files: archive, base: "0-1-20",
			target: "0-3-70", err: ErrOutsideWindow},
		{name: "a missing file", files: []ArchivedBinlog{iad1, pdx1}, base: "0-1-20", target: "0-2-120", err: ErrArchiveGap},
		{name: "not archived yet", files: archive, base: "0-1-20", target: "0-2-500", err: ErrOutsideWindow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := PlanPITRToGTID(c.files, c.timeline, pos(t, c.base), g(c.target), c.inclusive)
			if !checkPlan(t, plan, err, c.err, c.want) {
				return
			}
			if plan.Target.GTID == nil || *plan.Target.GTID != g(c.target) || plan.Target.Inclusive != c.inclusive {
				t.Fatalf("plan target %s", plan.Target)
			}
		})
	}
}

func TestPITRCoverage(t *testing.T) {
	file := func(site, name, start, end string, first, last int, rs ...string) ArchivedBinlog {
		return archived(t, site, name, start, end, first, last, rs...)
	}
	iad1 := file("iad", "mysql-bin.000001", "", "0-1-50", 0, 50, "0-1-1..50")
	iad2 := file("iad", "mysql-bin.000002", "0-1-50", "0-1-100", 50, 100, "0-1-51..100")
	pdx1 := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-150", 80, 150, "0-1-81..100", "0-2-101..150")
	cases := []struct {
		name     string
		files    []ArchivedBinlog
		base     string
		from, to int
		empty    bool
		err      error
	}{
		{name: "to the last event across a failover", files: []ArchivedBinlog{iad1, iad2, pdx1}, base: "0-1-20",
			from: 20, to: 150},
		{name: "a gap ends the window", files: []ArchivedBinlog{iad1, pdx1}, base: "0-1-20", from: 20, to: 50},
		{name: "nothing archived after the backup", files: []ArchivedBinlog{iad1}, base: "0-1-50", from: 50, empty: true},
		{name: "an ambiguous archive", base: "0-1-90", from: 90, err: ErrArchiveAmbiguous, files: []ArchivedBinlog{
			file("iad", "mysql-bin.000003", "0-1-50", "0-1-105", 50, 105, "0-1-51..105"),
			file("pdx", "mysql-bin.000001", "0-1-80", "0-2-103", 80, 110, "0-1-81..100", "0-2-101..103")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := PITRCoverage(c.files, nil, pos(t, c.base), at(c.from))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("want %v, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.empty {
				if !w.To.Before(w.From) {
					t.Fatalf("window %v..%v, want empty", w.From, w.To)
				}
				return
			}
			if !w.From.Equal(at(c.from)) || !w.To.Equal(at(c.to)) {
				t.Fatalf("window %v..%v, want %v..%v", w.From, w.To, at(c.from), at(c.to))
			}
		})
	}
}
