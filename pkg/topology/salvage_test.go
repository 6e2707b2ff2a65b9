package topology

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// salvageGroup is a failover from a to b in flight: a (the old primary,
// writer "A") is observed as given, b is read-only.
func salvageGroup(a, b SiteView) Input {
	a.ServerID, b.ServerID = uuidA, uuidB
	in := group("b", a, b, ro("c", "A:1-10"))
	in.InFlight = &Intent{From: "a", To: "b", Generation: 4, Step: v1alpha1.StepPromoting}
	return in
}

func TestDecideSalvage(t *testing.T) {
	const timeout = 10 * time.Second
	readout := func(fenced bool, src, tgt gtid.Set) *SalvageReadout {
		return &SalvageReadout{SourceFenced: fenced, TargetFenced: true, Source: src, Target: tgt}
	}
	roA := ro("a", "A:1-12")
	mariaA := mariaView("a", v1alpha1.StateReadOnly, "0-2-20,0-1-52")
	cases := []struct {
		name    string
		in      Input
		timeout time.Duration
		elapsed time.Duration
		read    *SalvageReadout
		// sqlReached: the pass's SQL fence reached the old primary.
		sqlReached bool
		action     SalvageAction
		tail       string // for Apply, as gtid.Set prints it
		reason     string
	}{
		{name: "off", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: 0, action: SalvageOff},
		{name: "no failover in flight", in: with2(salvageGroup(roA, ro("b", "A:1-10")), func(in *Input) { in.InFlight = nil }),
			timeout: timeout, action: SalvageOff},
		{name: "time ran out", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout, elapsed: timeout,
			action: SalvageSkip, reason: v1alpha1.EventSalvageSkipped},
		{name: "recovering: held unreachable, its probe answered", in: salvageGroup(with(roA, func(v *SiteView) {
			v.State = v1alpha1.StateUnreachable
		}), ro("b", "A:1-10")), timeout: timeout, action: SalvageRead},
		{name: "unreadable: old primary unreachable", in: salvageGroup(confirmed(with(down("a"), func(v *SiteView) { v.Stale = true })), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageSkip},
		{name: "probes down but this pass's SQL fence reached it: read", in: salvageGroup(with(down("a"), func(v *SiteView) { v.Stale = true }), ro("b", "A:1-10")),
			timeout: timeout, sqlReached: true, action: SalvageRead},
		{name: "unreadable: old primary unknown", in: salvageGroup(unk("a"), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageSkip},
		{name: "unreadable: last probe failed", in: salvageGroup(with(roA, func(v *SiteView) { v.Stale = true }), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageSkip},
		{name: "unreadable: writable", in: salvageGroup(with(roA, func(v *SiteView) { v.State = v1alpha1.StateWritable }), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageSkip},
		{name: "unreadable: maybe writable", in: salvageGroup(with(roA, func(v *SiteView) { v.MaybeWritable = true }), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageSkip},
		{name: "old primary diverged", in: salvageGroup(with(roA, func(v *SiteView) { v.Diverged = true }), ro("b", "A:1-10")),
			timeout: timeout, action: SalvageRefuse, reason: v1alpha1.EventSalvageRefused},
		{name: "readable: read first", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout, elapsed: time.Second,
			action: SalvageRead},
		{name: "unreadable: the read failed", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout,
			read: &SalvageReadout{Failed: "a: i/o timeout"}, action: SalvageSkip, reason: v1alpha1.EventSalvageSkipped},
		{name: "target maybe writable already", in: salvageGroup(roA, with(ro("b", "A:1-10"), func(v *SiteView) { v.MaybeWritable = true })),
			timeout: timeout, action: SalvageSkip, reason: v1alpha1.EventSalvageSkipped},
		{name: "target not read-only when read", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout,
			read:   &SalvageReadout{SourceFenced: true, Source: set("A:1-12"), Target: set("A:1-10")},
			action: SalvageSkip, reason: v1alpha1.EventSalvageSkipped},
		{name: "not fenced when read", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout,
			read: readout(false, set("A:1-12"), set("A:1-10")), action: SalvageSkip, reason: v1alpha1.EventSalvageSkipped},
		{name: "nothing missing", in: salvageGroup(roA, ro("b", "A:1-12")), timeout: timeout,
			read: readout(true, set("A:1-12"), set("A:1-12")), action: SalvageNothing},
		{name: "MySQL tail salvaged", in: salvageGroup(roA, ro("b", "A:1-10")), timeout: timeout, elapsed: 3 * time.Second,
			read: readout(true, set("A:1-12"), set("A:1-10")), action: SalvageApply, tail: set("A:11-12").String(),
			reason: v1alpha1.EventTailSalvaged},
		{name: "MySQL would diverge: target holds its own write", in: salvageGroup(roA, ro("b", "A:1-10,B:1")), timeout: timeout,
			read: readout(true, set("A:1-12"), set("A:1-10,B:1")), action: SalvageRefuse, reason: v1alpha1.EventSalvageRefused},
		{name: "MySQL tail holds a lost set", in: withLost(salvageGroup(roA, ro("b", "A:1-10")), set("C:5")), timeout: timeout,
			read: readout(true, set("A:1-12,C:5"), set("A:1-10")), action: SalvageRefuse, reason: v1alpha1.EventSalvageRefused},
		{name: "MySQL tail holds another server's write outside the history",
			in: withPromoted(salvageGroup(roA, ro("b", "A:1-10")), set("A:1-5")), timeout: timeout,
			read: readout(true, set("A:1-12,C:1"), set("A:1-10")), action: SalvageRefuse, reason: v1alpha1.EventSalvageRefused},
		{name: "MariaDB tail salvaged", in: salvageGroup(mariaA, mariaView("b", v1alpha1.StateReadOnly, "0-2-20,0-1-50")),
			timeout: timeout, read: readout(true, maria("0-2-20,0-1-52"), maria("0-2-20,0-1-50")),
			action: SalvageApply, tail: gtid.MustParseSet("0-1:51-52").String(), reason: v1alpha1.EventTailSalvaged},
		{name: "MariaDB lagging target under another guess", in: salvageGroup(mariaA, mariaView("b", v1alpha1.StateReadOnly, "0-1-10,0-2-15")),
			timeout: timeout, read: readout(true, maria("0-2-20,0-1-52"), maria("0-1-10,0-2-15")),
			action: SalvageApply, tail: gtid.Lacks(maria("0-1-10,0-2-15"), maria("0-2-20,0-1-52")).String(),
			reason: v1alpha1.EventTailSalvaged},
		{name: "MariaDB would diverge: target wrote at the same seq", in: salvageGroup(mariaA, mariaView("b", v1alpha1.StateReadOnly, "0-2-20,0-1-50,0-3-51")),
			timeout: timeout, read: readout(true, maria("0-2-20,0-1-52"), maria("0-2-20,0-1-50,0-3-51")),
			action: SalvageRefuse, reason: v1alpha1.EventSalvageRefused},
		{name: "MariaDB nothing missing", in: salvageGroup(mariaA, mariaView("b", v1alpha1.StateReadOnly, "0-2-20,0-1-52")),
			timeout: timeout, read: readout(true, maria("0-2-20,0-1-52"), maria("0-2-20,0-1-52")), action: SalvageNothing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideSalvage(tc.in, SalvageAttempt{Timeout: tc.timeout, Started: t0, Now: t0.Add(tc.elapsed), Read: tc.read,
				SQLReached: tc.sqlReached})
			if got.Action != tc.action || got.Reason != tc.reason {
				t.Fatalf("got %s/%q (%s), want %s/%q", got.Action, got.Reason, got.Message, tc.action, tc.reason)
			}
			if tc.action == SalvageApply {
				if got.Tail.String() != tc.tail || !got.Until.Equal(tc.read.Source) {
					t.Fatalf("tail %s until %s, want tail %s until %s", got.Tail, got.Until, tc.tail, tc.read.Source)
				}
				if want := tc.timeout - tc.elapsed; got.Budget != want {
					t.Fatalf("budget %s, want %s", got.Budget, want)
				}
			}
			if got.Message == "" {
				t.Fatal("no message")
			}
		})
	}
}

// TestDecideSalvageJudgedDivergedSource: a source holding a lost set is
// flagged diverged by Judge, and its tail is refused before any read.
func TestDecideSalvageJudgedDivergedSource(t *testing.T) {
	in := withLost(salvageGroup(ro("a", "A:1-12,C:5"), ro("b", "A:1-10")), set("C:5"))
	got := DecideSalvage(Judge(in), SalvageAttempt{Timeout: time.Second, Started: t0, Now: t0})
	if got.Action != SalvageRefuse {
		t.Fatalf("got %s (%s), want Refuse", got.Action, got.Message)
	}
}

func with2(in Input, f func(*Input)) Input { f(&in); return in }

func withLost(in Input, lost gtid.Set) Input {
	in.History = append(in.History, FailoverRecord{From: "c", To: "a", Generation: 1, Time: t0.Add(-time.Hour),
		Kind: v1alpha1.KindEmergency, Lost: lost})
	return in
}

func withPromoted(in Input, promoted gtid.Set) Input {
	in.History = append(in.History, FailoverRecord{From: "c", To: "a", Generation: 1, Time: t0.Add(-time.Hour),
		Kind: v1alpha1.KindEmergency})
	in.Promoted, in.PromotedKnown = promoted, true
	return in
}
