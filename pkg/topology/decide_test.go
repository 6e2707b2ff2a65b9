package topology

import (
	"errors"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func TestDecideHealth(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"two sites, replica caught up", group("a", wr("a", "A:1-10"), ro("b", "A:1-10")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"three sites, replicas behind but within max lag", group("a", wr("a", "A:1-10"), ro("b", "A:1-9"), ro("c", "A:1-8")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"peer unreachable", group("a", wr("a", "A:1-10"), down("b")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonPeerDown}},
		{"peer not observed yet", group("a", wr("a", "A:1-10"), unk("b")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}},
		{"peer down outranks peer unknown", group("a", wr("a", "A:1-10"), unk("b"), down("c")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonPeerDown}},
		{"replication stopped", group("a", wr("a", "A:1-10"),
			with(ro("b", "A:1-10"), func(s *SiteView) { s.Replication.Running = false })),
			want{kind: KindDegraded, reason: v1alpha1.ReasonReplicationBroken}},
		{"replication error", group("a", wr("a", "A:1-10"),
			with(ro("b", "A:1-10"), func(s *SiteView) { s.Replication.Error = "Error 1062: duplicate key" })),
			want{kind: KindDegraded, reason: v1alpha1.ReasonReplicationBroken}},
		{"replica lags beyond max lag", group("a", wr("a", "A:1-10"),
			with(ro("b", "A:1-5"), func(s *SiteView) { s.Replication.Lag = 11 * time.Second })),
			want{kind: KindDegraded, reason: v1alpha1.ReasonReplicaLagging}},
		{"lag equal to max lag is fine", group("a", wr("a", "A:1-10"),
			with(ro("b", "A:1-5"), func(s *SiteView) { s.Replication.Lag = 10 * time.Second })),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"replica with errant transactions is divergence", group("a", wr("a", "A:1-10"), ro("b", "A:1-10,B:1-2")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"b"}}},
		{"old primary holding lost writes is divergence", group("b", ro("a", "A:1-12"), wr("b", "A:1-10,B:1-4")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"a"}}},
		{"replica ahead of a stale snapshot of the active site is not divergence", group("a",
			with(wr("a", "A:1-10"), func(s *SiteView) { s.Stale = true }), ro("b", "A:1-12")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"replica ahead of the active server's own transactions is not divergence", group("a",
			with(wr("a", "A:1-10,C:1-3"), func(s *SiteView) { s.ServerID = uuidA }), ro("b", "A:1-12,C:1-3")),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"other servers' transactions stay errant with a server id", group("a",
			with(wr("a", "A:1-10"), func(s *SiteView) { s.ServerID = uuidA }), ro("b", "A:1-12,C:1")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"b"}}},
		{"flagged divergence is reported even when unreachable", group("a", wr("a", "A:1-10"),
			with(down("b"), func(s *SiteView) { s.Diverged = true })),
			want{kind: KindDegraded, reason: v1alpha1.ReasonDivergence, divergent: []string{"b"}}},
		{"planned guard does not hide health", withPlanned(group("a", wr("a", "A:1-10"), ro("b", "A:1-10"))),
			want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy}},
		{"active not observed yet waits", group("a", unk("a"), ro("b", "A:1-10")),
			want{kind: KindDegraded, reason: v1alpha1.ReasonNotReady}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

func withPlanned(in Input) Input { in.PlannedInFlight = true; return in }

func TestDecideWriters(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"two writers: fence the one that is not active", group("a", wr("a", "A:1-10"), wr("b", "A:1-9,B:1")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: []string{"b"}}},
		{"three writers: fence both others", group("b", wr("a", "A:1"), wr("b", "A:1"), wr("c", "A:1")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "b", fence: []string{"a", "c"}}},
		{"one writer that is not active is a stale writer", group("a", ro("a", "A:1-10"), wr("b", "A:1-10")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonStaleWriter, target: "a", fence: []string{"b"}}},
		{"stale writer while the active site is unreachable", group("a", down("a"), wr("b", "A:1-10")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonStaleWriter, target: "a", fence: []string{"b"}}},
		{"two writers, active unreachable: fence both", group("a", down("a"), wr("b", "A:1"), wr("c", "A:1")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: []string{"b", "c"}}},
		{"fencing is not held by the planned guard", withPlanned(group("a", wr("a", "A:1"), wr("b", "A:1"))),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: []string{"b"}}},
		{"fencing is not held by the cooldown", afterFailover(group("b", wr("a", "A:1-3"), wr("b", "A:1-2,B:1")), "a", "b", time.Minute),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonSplitBrain, target: "b", fence: []string{"a"}}},
		{"fencing comes before total-loss and failover logic", group("a", down("a"), down("b"), wr("c", "A:1")),
			want{kind: KindFenceExtraWriters, reason: v1alpha1.ReasonStaleWriter, target: "a", fence: []string{"c"}}},
		{"split brain, no active site: the newest failover target wins",
			afterFailover(afterFailover(group("", wr("a", "A:1"), wr("b", "A:1"), ro("c", "A:1")), "b", "a", time.Hour), "a", "b", time.Minute),
			want{kind: KindSplitBrain, reason: v1alpha1.ReasonSplitBrain, target: "b", fence: []string{"a"}}},
		{"split brain, no active site, no history: priority wins", group("", ro("a", "A:1"), wr("b", "A:1"), wr("c", "A:1")),
			want{kind: KindSplitBrain, reason: v1alpha1.ReasonSplitBrain, target: "b", fence: []string{"c"}}},
		{"split brain, history target not writing: priority among writers",
			afterFailover(group("", wr("a", "A:1"), ro("b", "A:1"), wr("c", "A:1")), "a", "b", time.Minute),
			want{kind: KindSplitBrain, reason: v1alpha1.ReasonSplitBrain, target: "a", fence: []string{"c"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

func TestDecideNoActiveSingleWriter(t *testing.T) {
	d := assertDecision(t, group("", ro("a", "A:1"), wr("b", "A:1")), want{kind: KindHealthy, reason: v1alpha1.ReasonHealthy})
	if d.Active != "b" {
		t.Fatalf("Active = %q, want the only writer b", d.Active)
	}
	d = assertDecision(t, afterFailover(group("", ro("a", "A:1"), ro("b", "A:1")), "a", "b", time.Hour),
		want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "b"})
	if d.Active != "b" {
		t.Fatalf("Active = %q, want the history's last target b", d.Active)
	}
}

func TestDecideNoPrimary(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"every site read-only: re-assert the active site", group("b", ro("a", "A:1-9"), ro("b", "A:1-10")),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "b"}},
		{"never re-assert an active site another site is fresher than: fail over to it", group("a", ro("a", "A:1-9"), ro("b", "A:1-10")),
			want{kind: KindFailover, reason: v1alpha1.ReasonReassertUnsafe, target: "b"}},
		{"unreachable peer not confirmed fenced blocks the re-assertion", group("a", ro("a", "A:1"), down("b"), ro("c", "A:1")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "a", unconfirmed: []string{"b"}, wanted: KindNoPrimary}},
		{"unknown peer not confirmed fenced blocks the re-assertion", group("a", ro("a", "A:1"), unk("b")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonFenceUnconfirmed, target: "a", unconfirmed: []string{"b"}, wanted: KindNoPrimary}},
		{"unreachable peer confirmed fenced: re-assert", group("a", ro("a", "A:1"), confirmed(down("b"))),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
		{"administrator fenced the active site", group("a", with(ro("a", "A:1"), func(s *SiteView) { s.AdminFenced = true }), ro("b", "A:1")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonAdminFenced, target: "a", wanted: KindNoPrimary}},
		{"planned guard holds the re-assertion", withPlanned(group("a", ro("a", "A:1"), ro("b", "A:1"))),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonPlannedInFlight, target: "a", wanted: KindNoPrimary}},
		{"cooldown does not hold a re-assertion", afterFailover(group("a", ro("a", "A:1"), ro("b", "A:1")), "b", "a", time.Second),
			want{kind: KindNoPrimary, reason: v1alpha1.ReasonNoPrimary, target: "a"}},
		{"every site unreachable is total loss", group("a", down("a"), down("b"), down("c")),
			want{kind: KindTotalLoss, reason: v1alpha1.ReasonTotalLoss}},
		{"unreachable and unknown is not total loss", group("a", down("a"), unk("b")),
			want{kind: KindFailoverBlocked, reason: v1alpha1.ReasonNoCandidate, wanted: KindFailover}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assertDecision(t, c.in, c.want) })
	}
}

func TestDecideErrors(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		err  error
	}{
		{"no sites", Input{}, ErrNoSites},
		{"duplicate site", group("a", wr("a", "A:1"), ro("a", "A:1")), ErrDuplicateSite},
		{"unknown active site", group("z", wr("a", "A:1"), ro("b", "A:1")), ErrUnknownSite},
		{"bad state", group("a", wr("a", "A:1"), with(ro("b", "A:1"), func(s *SiteView) { s.State = "sleepy" })), ErrBadState},
		{"bad role", group("a", wr("a", "A:1"), with(ro("b", "A:1"), func(s *SiteView) { s.Role = "boss" })), ErrBadRole},
		{"failover in flight names an unknown site", func() Input {
			in := group("a", wr("a", "A:1"), ro("b", "A:1"))
			in.InFlight = &Intent{From: "a", To: "q", Generation: 4}
			return in
		}(), ErrUnknownSite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Decide(c.in); !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
		})
	}
}
