package topology

import (
	"testing"
	"time"
)

// TestJudgeDrain: a target ranked on A:1-10 received, having applied
// A:1-7, is read after its drain timeout. A slow applier is waited for
// while it advances, within the bounds; a relay log gone (received set
// shrank, mysqld restarted) is re-ranked; a stall or the overall bound
// gives the rest up.
func TestJudgeDrain(t *testing.T) {
	t0 := time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)
	b := DrainBounds{Progress: 10 * time.Second, Overall: time.Minute}
	target := SiteView{Name: "c", Executed: set("A:1-7"), Replication: Replication{Running: true, Retrieved: set("A:1-10")}}
	read := func(exec, ret string, applying bool, up time.Duration) RelayRead {
		return RelayRead{Executed: set(exec), Retrieved: set(ret), Applying: applying, Uptime: up}
	}
	begun := DrainWatch{Start: t0, Progress: t0, Last: read("A:1-7", "A:1-10", true, time.Hour)}
	// probed: the probe that ranked it showed mysqld started an hour
	// before t0.
	probed := target
	probed.Replication.Started = t0.Add(-time.Hour)
	type drainCase struct {
		name  string
		watch DrainWatch
		now   RelayRead
		after time.Duration // since t0
		want  DrainVerdict
	}
	cases := []drainCase{
		{"applied everything: holds", DrainWatch{}, read("A:1-10", "A:1-10", true, time.Hour), 0, DrainHolds},
		{"applied more than ranked on: holds", begun, read("A:1-11", "A:1-11", true, time.Hour), time.Second, DrainHolds},
		{"first read, applier runs: slow", DrainWatch{}, read("A:1-8", "A:1-10", true, time.Hour), 0, DrainSlow},
		{"advanced since the last read: slow", begun, read("A:1-8", "A:1-10", true, time.Hour+5*time.Second), 5 * time.Second, DrainSlow},
		{"advanced late in a long wait: slow", DrainWatch{Start: t0, Progress: t0.Add(40 * time.Second), Last: read("A:1-8", "A:1-10", true, time.Hour)},
			read("A:1-9", "A:1-10", true, time.Hour), 45 * time.Second, DrainSlow},
		{"received more since: slow", begun, read("A:1-8", "A:1-12", true, time.Hour), 5 * time.Second, DrainSlow},
		{"standing still within the progress bound: slow", begun, read("A:1-7", "A:1-10", true, time.Hour), 5 * time.Second, DrainSlow},
		{"standing still past the progress bound: stalled", begun, read("A:1-7", "A:1-10", true, time.Hour), 11 * time.Second, DrainStalled},
		{"past the overall bound though advancing: stalled", DrainWatch{Start: t0, Progress: t0.Add(55 * time.Second), Last: read("A:1-8", "A:1-10", true, time.Hour)},
			read("A:1-9", "A:1-10", true, time.Hour), time.Minute, DrainStalled},
		{"SQL thread stopped: stalled", begun, read("A:1-8", "A:1-10", false, time.Hour), 5 * time.Second, DrainStalled},
		{"SQL thread stopped on the first read: stalled", DrainWatch{}, read("A:1-7", "A:1-10", false, time.Hour), 0, DrainStalled},
		{"received set shrank since the probe: gone", DrainWatch{}, read("A:1-7", "A:1-7", true, time.Hour), 0, DrainRelayGone},
		{"replication reset (nothing received): gone", DrainWatch{}, read("A:1-7", "", false, time.Hour), 0, DrainRelayGone},
		{"received set shrank since the last read: gone", DrainWatch{Start: t0, Progress: t0, Last: read("A:1-7", "A:1-12", true, time.Hour)},
			read("A:1-8", "A:1-10", true, time.Hour), 5 * time.Second, DrainRelayGone},
		{"mysqld restarted since the last read: gone", begun, read("A:1-8", "A:1-10", true, 3*time.Second), 5 * time.Second, DrainRelayGone},
		{"uptime unknown: not taken for a restart", begun, read("A:1-8", "A:1-10", true, 0), 5 * time.Second, DrainSlow},
	}
	// Issue 15, gap 4: one long transaction applies past the progress
	// bound; its executed set stands still, its open transaction grows.
	busy := func(exec, trx string, rows int64) RelayRead {
		r := read(exec, "A:1-10", true, time.Hour)
		r.ApplierTrx, r.ApplierRows = trx, rows
		return r
	}
	busyWatch := DrainWatch{Start: t0, Progress: t0, Last: busy("A:1-7", "421", 1000)}
	cases = append(cases, []drainCase{
		{"one long transaction, rows growing past the progress bound: slow", busyWatch, busy("A:1-7", "421", 5000), 11 * time.Second, DrainSlow},
		{"another transaction open since: slow", busyWatch, busy("A:1-7", "422", 10), 11 * time.Second, DrainSlow},
		{"its rows standing still past the progress bound: stalled", busyWatch, busy("A:1-7", "421", 1000), 11 * time.Second, DrainStalled},
		{"no open transaction past the progress bound: stalled", busyWatch, busy("A:1-7", "", 0), 11 * time.Second, DrainStalled},
		{"busy past the overall bound: stalled", DrainWatch{Start: t0, Progress: t0.Add(55 * time.Second), Last: busy("A:1-7", "421", 1000)},
			busy("A:1-7", "421", 9000), time.Minute, DrainStalled},
		{"busy with its SQL thread stopped: stalled", busyWatch, func() RelayRead { r := busy("A:1-7", "421", 5000); r.Applying = false; return r }(),
			5 * time.Second, DrainStalled},
	}...)
	restarts := []drainCase{ // judged with probed
		// Issue 15, gap 3: a restart between the probe and the first read,
		// with a received set that did not shrink (re-read from a relay
		// log that is no longer the one ranked on).
		{"mysqld restarted since the probe, first read: gone", DrainWatch{}, read("A:1-8", "A:1-10", true, 20*time.Second), 0, DrainRelayGone},
		{"mysqld started as the probe showed: slow", DrainWatch{}, read("A:1-8", "A:1-10", true, time.Hour), 0, DrainSlow},
		{"a start within the slack of whole seconds: slow", DrainWatch{}, read("A:1-8", "A:1-10", true, time.Hour-3*time.Second), 0, DrainSlow},
		{"uptime unknown after the probe: not taken for a restart", DrainWatch{}, read("A:1-8", "A:1-10", true, 0), 0, DrainSlow},
	}
	for i, tc := range append(cases, restarts...) {
		tgt := target
		if i >= len(cases) {
			tgt = probed
		}
		t.Run(tc.name, func(t *testing.T) {
			got, w := JudgeDrain(tgt, tc.watch, tc.now, t0.Add(tc.after), b)
			if got != tc.want {
				t.Fatalf("verdict %d, want %d", got, tc.want)
			}
			if (got == DrainSlow) == w.Start.IsZero() {
				t.Fatalf("watch %+v after verdict %d: kept only while slow", w, got)
			}
		})
	}
}
