package failover

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// receivedAhead: a wrote A:1-10 and is seen down (SQL still reaches it, so
// it is fenced by SQL); b applied A:1-8; c applied only A:1-7 but its IO
// thread received A:1-10 (under semi-sync it acknowledged A:9-10).
func receivedAhead(w *world) {
	w.addSite("c")
	primarySeenDownButSQLAnswers(w)
	w.sites["c"].retrieved = gtid.MustParseSet(uuidA + ":1-10")
	w.sites["c"].relay = gtid.MustParseSet(uuidA + ":8-10")
}

// TestEmergencyRankedOnReceived: the replica that received the most is
// promoted once its relay log is applied; when its relay log no longer
// holds what its probe showed received (lost to a restart since), it is
// not promoted on that ranking, and the next pass, ranking it on what it
// executed, moves the failover to the site that holds the most.
func TestEmergencyRankedOnReceived(t *testing.T) {
	cases := []struct {
		name     string
		lost     bool
		to       string
		promoted string
	}{
		{"relay log holds what it received: promoted with it", false, "c", uuidA + ":1-10"},
		{"relay log lost since the probe: retargeted to the freshest", true, "b", uuidA + ":1-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			receivedAhead(w)
			if tc.lost {
				w.sites["c"].relay = gtid.Set{}
			}
			e := NewEmergency(w.env())
			w.relayMemo = e
			var atPromote gtid.Set
			w.onPromote = func(site string) { atPromote = w.sites[site].executed }
			out, err := run(t, w, e)
			if err != nil {
				t.Fatal(err)
			}
			if tc.lost {
				if out.Completed || w.promotes["c"] != 0 || !slices.Contains(w.events, v1alpha1.EventRelayLogShort) {
					t.Fatalf("first pass: outcome %+v promotes %v events %v", out, w.promotes, w.events)
				}
				if out, err = run(t, w, e); err != nil || !out.Completed {
					t.Fatalf("second pass: outcome %+v err %v", out, err)
				}
			}
			assertCompleted(t, w, tc.to, "")
			if w.promotes["c"]+w.promotes["b"] != 1 || !atPromote.Equal(gtid.MustParseSet(tc.promoted)) {
				t.Fatalf("promotes %v, target held %s when promoted, want %s", w.promotes, atPromote, tc.promoted)
			}
			if !tc.lost && slices.Contains(w.events, v1alpha1.EventRelayLogShort) {
				t.Fatalf("events %v: a relay log that held everything reported short", w.events)
			}
		})
	}
}

// runUntilDone runs passes a second apart until a failover completes.
func runUntilDone(t *testing.T, w *world, e *Emergency, passes int) []string {
	var waits []string
	for i := 0; i < passes && w.persisted.Status.LastFailover == nil; i++ {
		out, err := run(t, w, e)
		if err != nil {
			t.Logf("pass %d: %v", i, err)
		}
		if out.Waiting != "" {
			waits = append(waits, out.Waiting)
		}
		w.now = w.now.Add(time.Second)
	}
	if w.persisted.Status.LastFailover == nil {
		t.Fatalf("no failover completed in %d passes; waits %q", passes, waits)
	}
	return waits
}

// TestSlowDrainIsNotAShortRelayLog (from the review): c received A:1-10
// (under semi-sync it alone acknowledged A:9-10) and its relay log still
// holds A:8-10; its SQL thread is merely slow, so the drain runs out of
// its timeout. It must not be taken for a relay log gone: the failover
// waits while c's applier advances, says so, and promotes c with A:1-10.
func TestSlowDrainIsNotAShortRelayLog(t *testing.T) {
	w := newWorld(t)
	receivedAhead(w)
	w.sites["c"].slowApply = true
	e := NewEmergency(w.env())
	w.relayMemo = e
	var promotedWith gtid.Set
	w.onPromote = func(site string) { promotedWith = w.sites[site].executed }
	waits := runUntilDone(t, w, e, 20)
	lf := w.persisted.Status.LastFailover
	if lf.To != "c" || !gtid.Lacks(promotedWith, gtid.MustParseSet(uuidA+":1-10")).IsEmpty() {
		t.Fatalf("promoted %s with %s, want c with A:1-10 (c's relay log held it)", lf.To, promotedWith)
	}
	if slices.Contains(w.events, v1alpha1.EventRelayLogShort) || !slices.Contains(w.events, v1alpha1.EventRelayDrainSlow) {
		t.Fatalf("events %v: want the slow drain said, no relay log short", w.events)
	}
	if !slices.ContainsFunc(waits, func(s string) bool { return strings.Contains(s, "c's applier") }) {
		t.Fatalf("waits %q: the wait for the applier is not said", waits)
	}
	if lf.TransactionsLost != nil && *lf.TransactionsLost != 0 {
		t.Fatalf("lost %d %q: nothing was lost", *lf.TransactionsLost, lf.LostGtidSet)
	}
}

// TestStalledDrainRecordsTheLoss: c's SQL thread stopped with A:8-10 in
// its relay log. The failover does not wait for ever: past the drain
// bounds c is ranked on what it executed, and what it received and no
// promoted site holds is counted lost at once (not left to the old
// primary's read, which may never come).
func TestStalledDrainRecordsTheLoss(t *testing.T) {
	cases := []struct {
		name  string
		bGone bool
		to    string
		lost  string
	}{
		{"b holds more executed: retargeted to b, A:9-10 lost", false, "b", uuidA + ":9-10"},
		{"c alone: promoted with A:1-7, A:8-10 lost", true, "c", uuidA + ":8-10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			receivedAhead(w)
			w.sites["c"].sqlStopped = true
			if tc.bGone {
				w.sites["b"].up = false
			}
			e := NewEmergency(w.env())
			w.relayMemo = e
			runUntilDone(t, w, e, 30)
			lf := w.persisted.Status.LastFailover
			if lf.To != tc.to {
				t.Fatalf("promoted %s, want %s", lf.To, tc.to)
			}
			if lf.TransactionsLost == nil || lf.LostGtidSet != gtid.MustParseSet(tc.lost).String() || !lf.SourceLossPending {
				t.Fatalf("lost %v %q pending %v, want %s counted at once", lf.TransactionsLost, lf.LostGtidSet, lf.SourceLossPending, tc.lost)
			}
			if !slices.Contains(w.events, v1alpha1.EventRelayDrainStalled) || !slices.Contains(w.events, v1alpha1.EventTransactionsLost) {
				t.Fatalf("events %v", w.events)
			}
		})
	}
}

// TestGiveUpRelayWriteFailedKeepsTheLoss (from a review): the write that
// records what the target received and will not apply fails; the next
// pass, from the re-read status, must not take the target as ranked on
// what it executed without that record, or the loss is never counted.
func TestGiveUpRelayWriteFailedKeepsTheLoss(t *testing.T) {
	w := newWorld(t)
	receivedAhead(w)
	w.sites["c"].sqlStopped = true
	w.sites["b"].up = false
	w.failOnce = func(g *v1alpha1.MysqlFailoverGroup) bool {
		return g.Status.Failover != nil && g.Status.Failover.ReceivedLostGtidSet != ""
	}
	e := NewEmergency(w.env())
	w.relayMemo = e
	runUntilDone(t, w, e, 30)
	lf := w.persisted.Status.LastFailover
	if lf.To != "c" || lf.LostGtidSet != gtid.MustParseSet(uuidA+":8-10").String() {
		t.Fatalf("promoted %s with lost %q, want c with A:8-10 counted", lf.To, lf.LostGtidSet)
	}
}

// TestPromotionCountsWhatItsResetDrops (issue 15, gap 2): b is down and c,
// the only candidate left, was ranked on its probe, which showed nothing
// received beyond what it applied (A:1-7). It received A:8-10 after that
// probe and its SQL thread stopped, so the drain runs out. Promote's
// replication reset drops A:8-10 from its relay log: that must reach
// lastFailover.transactionsLost and receivedLostGtidSet, not vanish. A
// received set that cannot be read at the reset is said in a Warning.
func TestPromotionCountsWhatItsResetDrops(t *testing.T) {
	for _, unread := range []bool{false, true} {
		t.Run(map[bool]string{false: "read at the reset: counted", true: "unread at the reset: said"}[unread], func(t *testing.T) {
			w := newWorld(t)
			w.addSite("c")
			primarySeenDownButSQLAnswers(w)
			w.sites["b"].up = false
			c := w.sites["c"]
			c.retrieved = gtid.MustParseSet(uuidA + ":1-7")
			c.relay, c.sqlStopped, c.resetUnread = gtid.MustParseSet(uuidA+":8-10"), true, unread
			rec := &eventText{world: w}
			env := w.env()
			env.Notifier = rec
			e := NewEmergency(env)
			w.relayMemo = e
			runUntilDone(t, w, e, 60)
			lf := w.persisted.Status.LastFailover
			if lf.To != "c" {
				t.Fatalf("promoted %s, want c", lf.To)
			}
			if unread {
				if !slices.ContainsFunc(rec.msgs, func(m string) bool { return strings.Contains(m, "could not be read") }) {
					t.Fatalf("events %q: an unread received set at the reset is not said", rec.msgs)
				}
				return
			}
			want := gtid.MustParseSet(uuidA + ":8-10").String()
			if lf.TransactionsLost == nil || *lf.TransactionsLost != 3 || lf.LostGtidSet != want || lf.ReceivedLostGtidSet != want {
				t.Fatalf("lost %v %q received-lost %q, want A:8-10 (3) counted", lf.TransactionsLost, lf.LostGtidSet, lf.ReceivedLostGtidSet)
			}
			if !slices.Contains(w.events, v1alpha1.EventTransactionsLost) {
				t.Fatalf("events %v: no TransactionsLost", w.events)
			}
		})
	}
}
