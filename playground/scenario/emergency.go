package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func init() {
	register(Scenario{4, "operator-killed-mid-failover", "the operator is killed while a failover is in flight: it resumes, one generation", operatorKilledMidFailover})
	register(Scenario{6, "stale-primary", "the primary loses the operator but keeps its peer: after the failover it fences by the peer's view within one tick", stalePrimary})
	register(Scenario{9, "cooldown", "a second primary loss inside the cooldown does not fail over", cooldown})
}

// inFlight waits for an emergency failover to be in flight.
func (g *Group) inFlight(ctx context.Context, within time.Duration) (*v1alpha1.FailoverIntent, error) {
	mg, err := g.Wait(ctx, "a failover in flight", within, func(mg *v1alpha1.MysqlFailoverGroup) error {
		if mg.Status.Failover == nil {
			return fmt.Errorf("no failover yet (generation %d)", mg.Status.TopologyGeneration)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mg.Status.Failover, nil
}

func operatorKilledMidFailover(ctx context.Context, e *Env) Result {
	return play(ctx, e, "operator-killed-mid-failover", Plan{}, killOperatorMidFailover)
}

func killOperatorMidFailover(ctx context.Context, g *Group, l *Load, r *Result) error {
	e, a, b := g.e, Sites[0], Sites[1]
	pod, _, err := g.Pod(ctx, a)
	if err != nil {
		return err
	}
	// A frozen primary answers nobody: the failover waits in Fencing for
	// the old primary's lease deadline, which leaves time to kill the operator.
	l.Mark("freeze")
	if err := e.C.Freeze(ctx, g.NS, pod, ""); err != nil {
		return fmt.Errorf("freeze %s: %w", a, err)
	}
	defer func() { _ = e.C.Thaw(context.Background(), g.NS, pod, "") }()
	fo, err := g.inFlight(ctx, time.Minute)
	if err != nil {
		return err
	}
	r.Notef("operator killed with the failover at step %q, generation %d", fo.Step, fo.Generation)
	_, leading, err := restartOperator(ctx, e, l)
	if err != nil {
		return err
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	r.Notef("resumed failover done %.1fs after the new operator led", time.Since(leading).Seconds())
	if err := g.WaitDNS(ctx, b, 30*time.Second); err != nil {
		r.Failf("the resumed failover did not move DNS: %v; events: %s", err, g.events(ctx, "DNS"))
	}
	if _, err := l.WaitAck(ctx, b, false, time.Now(), 30*time.Second); err != nil {
		return err
	}
	h := r.stop(ctx, l)
	l.Mark("thaw")
	if err := e.C.Thaw(ctx, g.NS, pod, ""); err != nil {
		// The kubelet may have restarted a frozen container meanwhile.
		r.Notef("thaw %s: %v", a, err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return err
	}
	if mg.Status.TopologyGeneration != 2 {
		r.Failf("generation %d after the resumed failover, want 2", mg.Status.TopologyGeneration)
	}
	r.judge(h, *mg.Status.LastFailover.TransactionsLost)
	return nil
}

func stalePrimary(ctx context.Context, e *Env) Result {
	return play(ctx, e, "stale-primary", Plan{}, func(ctx context.Context, g *Group, l *Load, r *Result) error {
		fence, err := staleFence(ctx, g, l, r)
		if err != nil {
			return err
		}
		r.Figure("fence-s", fence.Seconds())
		return nil
	})
}

// staleFence cuts site-a off from the operator only. The operator fails
// over to site-b; site-a, still writable and still hearing its peer, must
// fence within one tick of site-b's sidecar holding the new view: its next
// tick starts within an interval, and it acts on the peer's answer as soon
// as it arrives, without waiting for the unreachable operator's request. It
// returns that latency: site-b's sidecar seen holding generation 2 to the end
// of the first refused probe on site-a after its last ack.
func staleFence(ctx context.Context, g *Group, l *Load, r *Result) (time.Duration, error) {
	a, b := Sites[0], Sites[1]
	l.Mark("cut-operator")
	if err := g.e.C.Partition(ctx, a, "operator"); err != nil {
		return 0, fmt.Errorf("partition %s operator: %w", a, err)
	}
	held, err := g.waitSidecarGeneration(ctx, b, 2, time.Minute)
	if err != nil {
		return 0, err
	}
	l.Mark("peer-holds-view")
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return 0, err
	}
	if _, err := l.WaitAck(ctx, b, false, held, 30*time.Second); err != nil {
		return 0, err
	}
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return 0, fmt.Errorf("heal: %w", err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return 0, err
	}
	rep := r.finish(ctx, l, *mg.Status.LastFailover.TransactionsLost)
	last, ok := lastAckOn(&l.hist, a)
	if !ok {
		return 0, fmt.Errorf("no write acknowledged by %s", a)
	}
	fence := refusedAfter(l.hist.Probes, a, last.End).Sub(held)
	// One tick, plus slack for the probe's own period and a loaded machine.
	tick := g.T.PeerCheckInterval
	if slack := 500 * time.Millisecond; fence > tick+slack {
		r.Failf("%s fenced %.2fs after %s's sidecar held the new view, more than one tick (%s)",
			a, fence.Seconds(), b, tick)
	}
	r.Notef("%s fenced %.2fs after %s's sidecar held generation 2; longest unavailability %s",
		a, fence.Seconds(), b, rep.MaxWindow.Round(time.Millisecond))
	return fence, nil
}

func cooldown(ctx context.Context, e *Env) Result {
	return play(ctx, e, "cooldown", Plan{}, lossInsideCooldown)
}

func lossInsideCooldown(ctx context.Context, g *Group, l *Load, r *Result) error {
	e, a, b := g.e, Sites[0], Sites[1]
	podA, _, err := g.Pod(ctx, a)
	if err != nil {
		return err
	}
	l.Mark("kill-a")
	if err := e.C.Kill(ctx, g.NS, podA, "mysqld"); err != nil {
		return err
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	// site-a's mysqld comes back (fenced) and replicates from site-b, unless
	// it committed a write site-b never received before it died (replication
	// is asynchronous): then it is marked diverged and kept out, and site-b's
	// outage below is blocked for want of a candidate as well as by the
	// cooldown.
	back, err := g.Wait(ctx, "site-a back as a replica or marked diverged", time.Minute, replicatingOrDiverged(a))
	if err != nil {
		return err
	}
	reasons := []string{"Cooldown"}
	if diverged(back, a) {
		r.Notef("%s came back diverged (an unreplicated write when it was killed): the cooldown is not the only block", a)
		reasons = append(reasons, "NoEligibleCandidate")
	}
	podB, _, err := g.Pod(ctx, b)
	if err != nil {
		return err
	}
	l.Mark("kill-b")
	if err := e.C.Kill(ctx, g.NS, podB, "mysqld"); err != nil {
		return err
	}
	mg, err := g.Wait(ctx, "FailoverBlocked/"+strings.Join(reasons, "|"), 30*time.Second, func(mg *v1alpha1.MysqlFailoverGroup) error {
		if c, ok := condition(mg, "FailoverBlocked"); ok && c.Status == "True" && slices.Contains(reasons, c.Reason) {
			return nil
		}
		return fmt.Errorf("conditions %v", mg.Status.Conditions)
	})
	if err != nil {
		r.Failf("%v", err)
	} else if mg.Status.TopologyGeneration != 2 || mg.Status.ActiveSite != b {
		r.Failf("failed over inside the cooldown: active %s generation %d", mg.Status.ActiveSite, mg.Status.TopologyGeneration)
	}
	// site-b's mysqld restarts after 10 s and is re-asserted: still generation 2.
	if err := g.WaitActive(ctx, b, 2, time.Minute); err != nil {
		r.Failf("%s not re-asserted after its restart: %v", b, err)
	}
	if _, err := l.WaitAck(ctx, b, false, time.Now(), 30*time.Second); err != nil {
		r.Failf("%v", err)
	}
	mg, err = g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return err
	}
	r.finish(ctx, l, *mg.Status.LastFailover.TransactionsLost)
	return nil
}

// replicatingOrDiverged says a site is a clean replica, or marked diverged.
func replicatingOrDiverged(site string) func(*v1alpha1.MysqlFailoverGroup) error {
	return func(mg *v1alpha1.MysqlFailoverGroup) error {
		if diverged(mg, site) {
			return nil
		}
		return replicating(site)(mg)
	}
}

// diverged says status marks site diverged.
func diverged(mg *v1alpha1.MysqlFailoverGroup, site string) bool {
	for _, s := range mg.Status.Sites {
		if s.Name == site && s.DivergentGtid != "" {
			return true
		}
	}
	return false
}

// replicating says a site is a clean, replicating read-only site.
func replicating(site string) func(*v1alpha1.MysqlFailoverGroup) error {
	return func(mg *v1alpha1.MysqlFailoverGroup) error {
		for _, s := range mg.Status.Sites {
			if s.Name == site && s.Replicating && s.DivergentGtid == "" {
				return nil
			}
		}
		return fmt.Errorf("sites %+v", mg.Status.Sites)
	}
}
