package topology

import (
	"fmt"
	"testing"
)

// TestSelectCandidateSemiSync: an acknowledging semi-sync replica, then a
// site whose server can take part in semi-sync, only breaks a tie between
// equally fresh candidates; freshness comes first, because the freshest
// replica already holds every acknowledged write.
func TestSelectCandidateSemiSync(t *testing.T) {
	acking := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.Replication.SemiSyncAcking = true }) }
	noSemi := func(s SiteView) SiteView { return with(s, func(v *SiteView) { v.SemiSyncUnavailable = true }) }
	tests := []struct {
		name  string
		sites []SiteView
		want  string
	}{
		{"equal sets: the acknowledging replica beats spec order",
			[]SiteView{ro("b", "A:1-10"), acking(ro("c", "A:1-10"))}, "c"},
		{"equal sets, both acknowledging: spec order",
			[]SiteView{acking(ro("b", "A:1-10")), acking(ro("c", "A:1-10"))}, "b"},
		{"equal sets, none acknowledging: spec order",
			[]SiteView{ro("b", "A:1-10"), ro("c", "A:1-10")}, "b"},
		{"fresher beats acknowledging: nothing it holds is lost",
			[]SiteView{acking(ro("b", "A:1-9")), ro("c", "A:1-10")}, "c"},
		{"fresher and acknowledging",
			[]SiteView{ro("b", "A:1-9"), acking(ro("c", "A:1-10"))}, "c"},
		{"an acknowledging site that is not eligible is not picked",
			[]SiteView{ro("b", "A:1-10"), with(acking(ro("c", "A:1-10")), func(v *SiteView) { v.AdminFenced = true })}, "b"},
		{"among three, the tie is broken between the freshest only",
			[]SiteView{acking(ro("b", "A:1-8")), ro("c", "A:1-10"), acking(ro("d", "A:1-10"))}, "d"},
		{"equal sets: a site that can take part in semi-sync beats one without the plugins",
			[]SiteView{noSemi(ro("b", "A:1-10")), ro("c", "A:1-10")}, "c"},
		{"fresher without the plugins still wins: nothing it holds is lost",
			[]SiteView{ro("b", "A:1-9"), noSemi(ro("c", "A:1-10"))}, "c"},
		{"equal sets: acknowledging comes before the plugins (an acknowledger has them)",
			[]SiteView{ro("b", "A:1-10"), acking(ro("c", "A:1-10"))}, "c"},
		{"equal holdings: the plugins come before nothing left to apply",
			[]SiteView{noSemi(ro("b", "A:1-10")), with(ro("c", "A:1-5"), func(v *SiteView) { v.Replication.Retrieved = set("A:1-10") })}, "c"},
		{"equal sets, both without the plugins: spec order",
			[]SiteView{noSemi(ro("b", "A:1-10")), noSemi(ro("c", "A:1-10"))}, "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if c := SelectCandidate(tc.sites); c.Site != tc.want {
				t.Fatalf("picked %q (%+v), want %q", c.Site, c, tc.want)
			}
		})
	}
}

// TestSelectCandidateReceived: candidates are ranked by what they hold once
// their relay logs are applied (executed plus received), so a replica that
// received, and under semi-sync acknowledged, a commit it has not applied
// yet is not passed over for one that applied more of the earlier stream;
// but what a relay log that is gone held (ReceivedLost) does not count.
func TestSelectCandidateReceived(t *testing.T) {
	recv := func(s SiteView, s2 string) SiteView {
		return with(s, func(v *SiteView) { v.Replication.Retrieved = set(s2) })
	}
	unknown := func(s SiteView) SiteView {
		return with(s, func(v *SiteView) { v.Replication.RetrievedUnknown = true })
	}
	lost := func(s SiteView) SiteView {
		return with(s, func(v *SiteView) { v.Replication.ReceivedLost = true })
	}
	tests := []struct {
		name      string
		sites     []SiteView
		want      string
		divergent []string
	}{
		{"received but not applied beats applied more of the earlier stream",
			[]SiteView{ro("b", "A:1-9"), recv(ro("c", "A:1-5"), "A:1-10")}, "c", nil},
		{"received ties applied: the one with nothing left to apply",
			[]SiteView{recv(ro("b", "A:1-5"), "A:1-10"), ro("c", "A:1-10")}, "c", nil},
		{"received ties applied: the acknowledging replica first",
			[]SiteView{ro("b", "A:1-10"), with(recv(ro("c", "A:1-5"), "A:1-10"),
				func(v *SiteView) { v.Replication.SemiSyncAcking = true })}, "c", nil},
		{"received already applied changes nothing",
			[]SiteView{recv(ro("b", "A:1-9"), "A:1-9"), ro("c", "A:1-10")}, "c", nil},
		{"received unknown: executed only",
			[]SiteView{ro("b", "A:1-9"), unknown(recv(ro("c", "A:1-5"), "A:1-10"))}, "b", nil},
		{"relay log gone since the read (restart, reset): executed only",
			[]SiteView{ro("b", "A:1-9"), lost(recv(ro("c", "A:1-5"), "A:1-10"))}, "b", nil},
		{"received beyond another's applied is no divergence",
			[]SiteView{recv(ro("b", "A:1-3"), "A:1-8"), ro("c", "A:1-6"), recv(ro("d", "A:1-2"), "A:1-7")}, "b", nil},
		{"received what the freshest lacks: divergence named",
			[]SiteView{ro("b", "A:1-10,B:1"), recv(ro("c", "A:1-5"), "A:1-8,B:1-2")}, "", []string{"c"}},
		{"a diverged received set does not win: divergence named",
			[]SiteView{ro("b", "A:1-10"), recv(ro("c", "A:1-5"), "A:1-5,C:1")}, "", []string{"c"}},
		{"MariaDB: an IO position another server wrote at a seq the freshest holds does not win",
			[]SiteView{ro("b", "0-1:1-100,0-2:101-104"), recv(ro("c", "0-1:1-100,0-2:101-102"), "0-3:103")}, "", []string{"c"}},
		{"MariaDB: an IO position already applied, the domain's seqs by two servers",
			[]SiteView{recv(ro("b", "0-1:1-100,0-2:101-104"), "0-2:104"), ro("c", "0-1:1-100,0-2:101-103")}, "b", nil},
		{"MariaDB: the IO position past the other's executed wins",
			[]SiteView{ro("b", "0-1:1-100,0-2:101-104"), recv(ro("c", "0-1:1-100,0-2:101-103"), "0-2:105")}, "c", nil},
		{"MariaDB: an IO position already applied changes nothing",
			[]SiteView{ro("b", "0-1:1-100,0-2:101-104"), recv(ro("c", "0-1:1-100,0-2:101-104"), "0-2:103")}, "b", nil},
		{"MariaDB: IO position behind the other's executed",
			[]SiteView{ro("b", "0-1:1-100,0-2:101-106"), recv(ro("c", "0-1:1-100,0-2:101-103"), "0-2:105")}, "b", nil},
		{"MariaDB: an IO position whose relay log is gone (seed 1144)",
			[]SiteView{ro("b", "0-1:1-100,0-2:101-104"), lost(recv(ro("c", "0-1:1-100,0-2:101-103"), "0-2:105"))}, "b", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := SelectCandidate(tc.sites)
			var div []string
			for _, d := range c.Divergent {
				div = append(div, d.Site)
			}
			if c.Site != tc.want || fmt.Sprint(div) != fmt.Sprint(tc.divergent) {
				t.Fatalf("picked %q divergent %v (%+v), want %q divergent %v", c.Site, div, c, tc.want, tc.divergent)
			}
		})
	}
}

// TestDrainedShort: after the drain, the target must hold what it was
// ranked on (its executed set plus what it received); otherwise its relay
// log did not hold it (gone with a restart or a reset) and it is not
// promoted on that ranking.
func TestDrainedShort(t *testing.T) {
	recv := func(s SiteView, s2 string) SiteView {
		return with(s, func(v *SiteView) { v.Replication.Retrieved = set(s2) })
	}
	tests := []struct {
		name   string
		target SiteView
		after  string
		short  string
	}{
		{"relay log applied: nothing short", recv(ro("c", "A:1-5"), "A:1-10"), "A:1-10", ""},
		{"nothing received: nothing short", ro("c", "A:1-5"), "A:1-5", ""},
		{"applied more since the read: nothing short", recv(ro("c", "A:1-5"), "A:1-8"), "A:1-9", ""},
		{"relay log gone: what it was ranked on is short", recv(ro("c", "A:1-5"), "A:1-10"), "A:1-5", "A:6-10"},
		{"partly applied", recv(ro("c", "A:1-5"), "A:1-10"), "A:1-7", "A:8-10"},
		{"ranked without its received set (lost): only executed counts",
			with(recv(ro("c", "A:1-5"), "A:1-10"), func(v *SiteView) { v.Replication.ReceivedLost = true }), "A:1-5", ""},
		{"MariaDB: IO position applied", recv(ro("c", "0-1:1-100,0-2:101-103"), "0-2:105"), "0-1:1-100,0-2:101-105", ""},
		{"MariaDB: IO position beyond the relay log (seed 1144)",
			recv(ro("c", "0-1:1-100,0-2:101-103"), "0-2:105"), "0-1:1-100,0-2:101-103", "0-2:105"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DrainedShort(tc.target, set(tc.after))
			if got.String() != set(tc.short).String() {
				t.Fatalf("short %q, want %q", got, tc.short)
			}
		})
	}
}
