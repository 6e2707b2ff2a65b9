package topology

import (
	"errors"
	"fmt"
	"slices"
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

// runs parses "0-1-51..100" runs.
func runs(t *testing.T, specs ...string) []GTIDRun {
	t.Helper()
	out := make([]GTIDRun, 0, len(specs))
	for _, s := range specs {
		var r GTIDRun
		if _, err := fmt.Sscanf(s, "%d-%d-%d..%d", &r.Domain, &r.Server, &r.From, &r.To); err != nil {
			t.Fatalf("run %q: %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

var pitrT0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return pitrT0.Add(time.Duration(s) * time.Second) }

// archived describes a file: times in seconds after t0, the latest event
// time being its last transaction's.
func archived(t *testing.T, site, name, start, end string, first, last int, rs ...string) ArchivedBinlog {
	return ArchivedBinlog{Site: site, File: name, Start: pos(t, start), End: pos(t, end), First: at(first),
		Last: at(last), Max: at(last), Runs: runs(t, rs...)}
}

// checkPlan fails t unless plan and err are what a case wants: wantErr,
// or the files want (site/file) in order. It tells whether to go on.
func checkPlan(t *testing.T, plan PITRPlan, err, wantErr error, want []string) bool {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("want %v, got %v (plan %+v)", wantErr, err, plan)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(plan.Files))
	for _, f := range plan.Files {
		got = append(got, f.Site+"/"+f.File)
	}
	if !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Fatalf("files %v, want %v", got, want)
	}
	return true
}

func TestPlanPITR(t *testing.T) {
	file := func(site, name, start, end string, first, last int, rs ...string) ArchivedBinlog {
		return archived(t, site, name, start, end, first, last, rs...)
	}
	// iad wrote 1-100 in two files, then failed over to pdx, whose first
	// file repeats 81-100 (replicated) and goes on to 150.
	iad1 := file("iad", "mysql-bin.000001", "", "0-1-50", 0, 50, "0-1-1..50")
	iad2 := file("iad", "mysql-bin.000002", "0-1-50", "0-1-100", 50, 100, "0-1-51..100")
	pdx1 := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-150", 80, 150, "0-1-81..100", "0-2-101..150")
	archive := []ArchivedBinlog{pdx1, iad2, iad1}
	// fra was cloned at 0-1-200 (its binlog state empty), replicated
	// 201-300 and wrote them to its first file, whose Gtid_list is empty.
	fra1 := file("fra", "mysql-bin.000001", "", "0-1-300", 200, 300, "0-1-201..300")
	// A file whose commit times run backwards: its last transaction
	// committed at 60, an earlier one at 95.
	late := file("iad", "mysql-bin.000001", "", "0-1-100", 0, 60, "0-1-1..100")
	late.Max = at(95)
	after := file("iad", "mysql-bin.000002", "0-1-100", "0-1-200", 100, 200, "0-1-101..200")
	// iad wrote 101-105 that never reached pdx (lost in an emergency
	// failover); pdx, promoted at 0-1-100, rotated at once. iad's file
	// holds 51-100 (replicated) and 101-105 (lost).
	iad3 := file("iad", "mysql-bin.000003", "0-1-50", "0-1-105", 50, 105, "0-1-51..105")
	pdxA := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-103", 80, 110, "0-1-81..100", "0-2-101..103")
	pdxB := file("pdx", "mysql-bin.000002", "0-2-103", "0-2-200", 110, 200, "0-2-104..200")
	// The same seqs, iad's diverged file ending on the same one as pdx's.
	iad3tie := file("iad", "mysql-bin.000003", "0-1-50", "0-1-103", 50, 105, "0-1-51..103")
	// A base backup taken on iad after it wrote 101-110, which pdx never
	// received (promoted at 0-1-100, pdx wrote 0-2-101..200).
	iadLost := file("iad", "mysql-bin.000003", "0-1-50", "0-1-110", 50, 110, "0-1-51..110")
	pdxNew := file("pdx", "mysql-bin.000001", "0-1-80", "0-2-200", 80, 200, "0-1-81..100", "0-2-101..200")
	// One site, two histories: a wrote 0-2-101..110 (lost); recloned from
	// b at 0-3-105, its binlog begins again and holds b's 106-200.
	aOld := file("a", "mysql-bin.000003@old", "0-1-100", "0-2-110", 100, 110, "0-2-101..110")
	aNew := file("a", "mysql-bin.000001@new", "0-3-105", "0-3-200", 120, 200, "0-3-106..200")
	// pdx (server 2) was promoted holding 0-1-100.
	failedOver := []Promotion{{Generation: 2, To: "pdx", ToServer: 2, Position: pos(t, "0-1-100")}}
	cases := []struct {
		name     string
		files    []ArchivedBinlog
		timeline []Promotion
		base     string
		stop     int
		target   int
		want     []string
		err      error
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
		{name: "a re-seeded site's first file does not jump a gap", files: []ArchivedBinlog{iad1, iad2, fra1},
			base: "0-1-20", stop: 20, target: 250, err: ErrArchiveGap},
		{name: "a re-seeded site's first file continues its own start", files: []ArchivedBinlog{fra1},
			base: "0-1-200", stop: 200, target: 250, want: []string{"fra/mysql-bin.000001"}},
		{name: "the chain stops at the file whose latest time reaches the target",
			files: []ArchivedBinlog{late, after}, base: "0-1-1", stop: 1, target: 90,
			want: []string{"iad/mysql-bin.000001"}},
		{name: "a diverged old primary's file and the new primary's both continue",
			files: []ArchivedBinlog{iad3, pdxA, pdxB}, base: "0-1-90", stop: 90, target: 150, err: ErrArchiveAmbiguous},
		{name: "a diverged file ending on the same seq as the new primary's",
			files: []ArchivedBinlog{iad3tie, pdxA, pdxB}, base: "0-1-90", stop: 90, target: 150, err: ErrArchiveAmbiguous},
		{name: "a diverged file overlapping the chosen one beyond the state",
			files: []ArchivedBinlog{iad3, pdxA, pdxB}, base: "0-1-100", stop: 100, target: 150, err: ErrArchiveAmbiguous},
		{name: "a base holding lost writes, with its own file archived",
			files: []ArchivedBinlog{iadLost, pdxNew}, base: "0-1-110", stop: 110, target: 190, err: ErrArchiveAmbiguous},
		{name: "a base holding lost writes, only the new primary's file archived",
			files: []ArchivedBinlog{pdxNew}, base: "0-1-110", stop: 110, target: 190, err: ErrArchiveAmbiguous},
		{name: "one site's files of two histories",
			files: []ArchivedBinlog{aOld, aNew}, base: "0-1-100", stop: 100, target: 190, err: ErrArchiveAmbiguous},
		{name: "the timeline cuts the diverged file and the new primary's files carry on",
			files: []ArchivedBinlog{iad3, pdxA, pdxB}, timeline: failedOver, base: "0-1-90", stop: 90, target: 150,
			want: []string{"pdx/mysql-bin.000001", "pdx/mysql-bin.000002"}},
		{name: "only the diverged file reaches past the promotion",
			files: []ArchivedBinlog{iad1, iad3}, timeline: failedOver, base: "0-1-20", stop: 20, target: 102,
			err: ErrArchiveGap},
		{name: "a target before the promotion, in a file the timeline does not cut",
			files: []ArchivedBinlog{iad1, iad3}, timeline: failedOver, base: "0-1-20", stop: 20, target: 40,
			want: []string{"iad/mysql-bin.000001"}},
		{name: "a cut file's times do not end the chain",
			files: []ArchivedBinlog{iad1, iad3}, timeline: failedOver, base: "0-1-20", stop: 20, target: 60,
			err: ErrArchiveGap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := PlanPITR(c.files, c.timeline, pos(t, c.base), at(c.stop), at(c.target))
			if !checkPlan(t, plan, err, c.err, c.want) {
				return
			}
		})
	}
}

func TestCutAtDivergence(t *testing.T) {
	file := func(start string, rs ...string) ArchivedBinlog {
		return archived(t, "iad", "mysql-bin.000003", start, "0-1-1", 0, 10, rs...)
	}
	promo := func(gen int64, server uint32, at string) Promotion {
		return Promotion{Generation: gen, ToServer: server, Position: pos(t, at)}
	}
	cases := []struct {
		name     string
		file     ArchivedBinlog
		timeline []Promotion
		runs     []string // kept; nil: the file is not cut
		end      string
	}{
		{name: "no timeline trusts the file", file: file("0-1-50", "0-1-51..105")},
		{name: "the old primary's writes past the promotion are cut", file: file("0-1-50", "0-1-51..105"),
			timeline: []Promotion{promo(2, 2, "0-1-100")}, runs: []string{"0-1-51..100"}, end: "0-1-100"},
		{name: "the new primary's file agrees", file: file("0-1-80", "0-1-81..100", "0-2-101..103"),
			timeline: []Promotion{promo(2, 2, "0-1-100")}},
		{name: "a file wholly past the promotion by the old primary is cut to nothing",
			file: file("0-1-100", "0-1-101..105"), timeline: []Promotion{promo(2, 2, "0-1-100")}, runs: []string{},
			end: "0-1-100"},
		{name: "the old primary promoted again writes past the second promotion",
			file:     file("0-2-150", "0-2-151..200", "0-1-201..250"),
			timeline: []Promotion{promo(2, 2, "0-1-100"), promo(3, 1, "0-2-200")}},
		{name: "an abandoned target's writes, and what only it had received, are cut",
			file:     file("0-1-80", "0-1-81..100", "0-3-101..104"),
			timeline: []Promotion{promo(2, 3, "0-1-100"), promo(3, 4, "0-1-98")}, runs: []string{"0-1-81..98"},
			end: "0-1-98"},
		{name: "each domain is judged on its own", file: file("0-1-100,1-1-4", "1-1-5..12"),
			timeline: []Promotion{promo(2, 2, "0-1-100,1-1-10")}, runs: []string{"1-1-5..10"}, end: "0-1-100,1-1-10"},
		{name: "a domain the new primary never had is lost past nothing", file: file("0-1-100", "2-1-1..3"),
			timeline: []Promotion{promo(2, 2, "0-1-100")}, runs: []string{}, end: "0-1-100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CutAtDivergence(c.file, c.timeline)
			if c.runs == nil {
				if got.Cut || len(got.Runs) != len(c.file.Runs) {
					t.Fatalf("cut to %+v, want the file whole", got)
				}
				return
			}
			want := runs(t, c.runs...)
			if !got.Cut || fmt.Sprint(got.Runs) != fmt.Sprint(want) || got.End.String() != pos(t, c.end).String() {
				t.Fatalf("got runs %v end %s cut %v; want runs %v end %s", got.Runs, got.End, got.Cut, want, c.end)
			}
		})
	}
}
