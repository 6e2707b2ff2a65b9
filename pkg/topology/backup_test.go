package topology

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestBackupSource(t *testing.T) {
	primary := wr("a", "A:1-10")
	tests := []struct {
		name    string
		in      Input
		asked   string
		want    Donor
		wantErr error
	}{
		{name: "a caught-up replica rather than the primary",
			in: group("a", primary, ro("b", "A:1-10"), ro("c", "A:1-10")), want: Donor{Site: "b"}},
		{name: "a lagging replica is passed over",
			in:   group("a", primary, with(ro("b", "A:1-5"), func(v *SiteView) { v.Replication.Lag = time.Minute }), ro("c", "A:1-10")),
			want: Donor{Site: "c"}},
		{name: "no fit replica: the primary",
			in: group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.Diverged = true })), want: Donor{Site: "a", Primary: true}},
		{name: "the site asked for, when fit",
			in: group("a", primary, ro("b", "A:1-10"), ro("c", "A:1-10")), asked: "c", want: Donor{Site: "c"}},
		{name: "the primary asked for",
			in: group("a", primary, ro("b", "A:1-10")), asked: "a", want: Donor{Site: "a", Primary: true}},
		{name: "a diverged site asked for is refused",
			in:    group("a", primary, ro("b", "A:1-10"), with(ro("c", "A:1-10,C:1"), func(v *SiteView) { v.Diverged = true })),
			asked: "c", wantErr: ErrNoDonor},
		{name: "a site holding what the primary lacks, asked for, is refused",
			in: group("a", primary, ro("b", "A:1-10,B:1")), asked: "b", wantErr: ErrNoDonor},
		{name: "an admin-fenced site asked for is refused",
			in:    group("a", primary, with(ro("b", "A:1-10"), func(v *SiteView) { v.AdminFenced = true })),
			asked: "b", wantErr: ErrNoDonor},
		{name: "an unknown site asked for",
			in: group("a", primary, ro("b", "A:1-10")), asked: "z", wantErr: ErrUnknownSite},
		{name: "an emergency failover in flight defers it",
			in: with2(group("a", primary, ro("b", "A:1-10")), func(in *Input) {
				in.InFlight = &Intent{From: "a", To: "b", Generation: 4}
			}), wantErr: ErrBackupDeferred},
		{name: "a planned failover in flight defers it",
			in: with2(group("a", primary, ro("b", "A:1-10")), func(in *Input) { in.PlannedInFlight = true }), wantErr: ErrBackupDeferred},
		{name: "an admin-fenced primary: its replica still serves",
			in: group("a", with(primary, func(v *SiteView) { v.AdminFenced = true }), ro("b", "A:1-10")), want: Donor{Site: "b"}},
		{name: "an admin-fenced primary and a down replica: no source",
			in: group("a", with(primary, func(v *SiteView) { v.AdminFenced = true }), down("b")), wantErr: ErrNoDonor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BackupSource(tc.in, tc.asked)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %+v, %v; want %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return now.Add(-time.Duration(d) * 24 * time.Hour) }
	ok := func(name string, d int) BackupRecord {
		return BackupRecord{Name: name, Phase: v1alpha1.BackupSucceeded, Done: day(d)}
	}
	bad := func(name string, d int) BackupRecord {
		return BackupRecord{Name: name, Phase: v1alpha1.BackupFailed, Done: day(d)}
	}
	running := BackupRecord{Name: "run", Phase: v1alpha1.BackupRunning}
	tests := []struct {
		name string
		in   []BackupRecord
		r    Retention
		want []string
	}{
		{name: "keep the last two", in: []BackupRecord{ok("d1", 1), ok("d2", 2), ok("d3", 3), running},
			r: Retention{KeepLast: 2, MinKeep: 1, MaxFailedKeep: 10}, want: []string{"d3"}},
		{name: "older than the age go", in: []BackupRecord{ok("d1", 1), ok("d10", 10), ok("d40", 40)},
			r: Retention{MaxAge: 30 * 24 * time.Hour, MinKeep: 1, MaxFailedKeep: 10}, want: []string{"d40"}},
		{name: "minKeep keeps old ones when all are old", in: []BackupRecord{ok("d40", 40), ok("d50", 50), ok("d60", 60)},
			r: Retention{MaxAge: 30 * 24 * time.Hour, MinKeep: 2, MaxFailedKeep: 10}, want: []string{"d60"}},
		{name: "failed beyond maxFailedKeep go, newest failures stay",
			in: []BackupRecord{bad("f1", 1), bad("f2", 2), bad("f3", 3), ok("d1", 1)},
			r:  Retention{MinKeep: 1, MaxFailedKeep: 1}, want: []string{"f3", "f2"}},
		{name: "failures do not count toward keepLast", in: []BackupRecord{bad("f1", 1), ok("d2", 2), ok("d3", 3)},
			r: Retention{KeepLast: 2, MinKeep: 1, MaxFailedKeep: 10}},
		{name: "running and pending never go", in: []BackupRecord{running, {Name: "p", Phase: v1alpha1.BackupPending}},
			r: Retention{KeepLast: 1, MaxAge: time.Hour, MinKeep: 1}},
		{name: "no policy keeps everything", in: []BackupRecord{ok("d1", 1), ok("d400", 400)}, r: Retention{MinKeep: 1, MaxFailedKeep: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Prune(tc.in, tc.r, now); !slices.Equal(got, tc.want) {
				t.Fatalf("pruned %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseRetention(t *testing.T) {
	age := func(s string) v1alpha1.RetentionPolicy { return v1alpha1.RetentionPolicy{MaxAge: &s} }
	r, err := ParseRetention(age("1d12h"))
	if err != nil || r.MaxAge != 36*time.Hour || r.MinKeep != 1 || r.MaxFailedKeep != 10 {
		t.Fatalf("1d12h: %+v, %v", r, err)
	}
	for _, bad := range []string{"30m", "d", "0d", "-1d", "12"} {
		if _, err := ParseRetention(age(bad)); !errors.Is(err, ErrRetention) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestBackupRetry(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		attempts int
		wait     time.Duration
		giveUp   bool
	}{{1, 30 * time.Second, false}, {2, time.Minute, false}, {4, 4 * time.Minute, false}, {5, 0, true}} {
		at, giveUp := BackupRetry(c.attempts, t0)
		if giveUp != c.giveUp || (!giveUp && at.Sub(t0) != c.wait) {
			t.Fatalf("after %d attempts: %s later, give up %v", c.attempts, at.Sub(t0), giveUp)
		}
	}
}
