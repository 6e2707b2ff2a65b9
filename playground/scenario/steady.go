package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{2, "operator-restart", "the operator is killed and restarts while the group is healthy: no failover, no fence", operatorRestart})
	register(Scenario{7, "replica-partitioned", "the replica loses the primary and the operator: no failover", replicaPartitioned})
	register(Scenario{8, "sidecar-crash", "the primary's sidecar crashes and restarts: no failover", sidecarCrash})
}

// noFailover checks that the group is still on its first site at generation 1.
func noFailover(ctx context.Context, g *Group, r *Result) {
	mg, err := g.Get(ctx)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	st := mg.Status
	if st.ActiveSite != Sites[0] || st.TopologyGeneration != 1 || st.LastFailover != nil {
		r.Failf("a failover happened: active %s generation %d lastFailover %+v", st.ActiveSite, st.TopologyGeneration, st.LastFailover)
	}
}

// refusedOn counts the failed probes of site between from and to.
func refusedOn(h *load.History, site string, from, to time.Time) (n int, first load.Attempt) {
	for _, p := range h.Probes {
		if p.Site == site && !p.OK && p.Start.After(from) && p.End.Before(to) {
			if n == 0 {
				first = p
			}
			n++
		}
	}
	return n, first
}

func operatorRestart(ctx context.Context, e *Env) Result {
	return play(ctx, e, "operator-restart", Plan{}, operatorRestartBody)
}

func operatorRestartBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	kill, back, err := restartOperator(ctx, g.e, l)
	if err != nil {
		return err
	}
	r.Notef("operator leading again %.1fs after the kill", back.Sub(kill).Seconds())
	// Past the operator's absence, for longer than leaseTimeout.
	if err := sleepCtx(ctx, g.T.LeaseTimeout); err != nil {
		return err
	}
	noFailover(ctx, g, r)
	end := l.Mark("end")
	rep := r.finish(ctx, l, -1)
	if n, p := refusedOn(&l.hist, Sites[0], kill, end); n > 0 {
		r.Failf("%s refused %d probes after the operator was killed, first %s", Sites[0], n, p.Err)
	}
	if rep.MaxWindow > time.Second {
		r.Failf("writes unavailable for %s while the operator was away", rep.MaxWindow)
	}
	return nil
}

// restartOperator kills the operator's container and waits until a new
// process holds the leader election Lease. It returns both moments.
func restartOperator(ctx context.Context, e *Env, l *Load) (time.Time, time.Time, error) {
	pod, err := e.OperatorPod(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	before, err := e.leaseHolder(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	kill := l.Mark("operator-kill")
	if err := e.C.Kill(ctx, "bloodraven-system", pod, ""); err != nil {
		return kill, time.Time{}, fmt.Errorf("kill operator: %w", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if h, err := e.leaseHolder(ctx); err == nil && h != "" && h != before {
			return kill, l.Mark("operator-leading"), nil
		}
		if time.Now().After(deadline) {
			return kill, time.Time{}, fmt.Errorf("no new operator leader within 2m (holder %s)", before)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return kill, time.Time{}, err
		}
	}
}

// leaseHolder is the holder of the operator's leader election Lease.
func (e *Env) leaseHolder(ctx context.Context) (string, error) {
	out, err := e.C.Kubectl(ctx, "-n", "bloodraven-system", "get", "lease", "bloodraven.shipstream.io",
		"-o", "jsonpath={.spec.holderIdentity}")
	return strings.TrimSpace(string(out)), err
}

func replicaPartitioned(ctx context.Context, e *Env) Result {
	return play(ctx, e, "replica-partitioned", Plan{}, replicaPartitionedBody)
}

func replicaPartitionedBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	e := g.e
	b := Sites[1]
	cut := l.Mark("cut-replica")
	for _, other := range []string{"operator", Sites[0]} {
		if err := e.C.Partition(ctx, b, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", b, other, err)
		}
	}
	// Well past detection and the replica's own lease.
	if err := sleepCtx(ctx, 2*g.T.LeaseTimeout); err != nil {
		return err
	}
	noFailover(ctx, g, r)
	l.Mark("heal")
	if err := e.C.HealAll(ctx); err != nil {
		return err
	}
	if err := g.WaitActive(ctx, Sites[0], 1, time.Minute); err != nil {
		r.Failf("not healthy again after the heal: %v", err)
	}
	end := l.Mark("end")
	rep := r.finish(ctx, l, -1)
	if n, p := refusedOn(&l.hist, Sites[0], cut, end); n > 0 {
		r.Failf("%s refused %d probes while the replica was cut off, first %s", Sites[0], n, p.Err)
	}
	if rep.MaxWindow > time.Second {
		r.Failf("writes unavailable for %s while the replica was cut off", rep.MaxWindow)
	}
	return nil
}

func sidecarCrash(ctx context.Context, e *Env) Result {
	return play(ctx, e, "sidecar-crash", Plan{}, sidecarCrashBody)
}

func sidecarCrashBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	e := g.e
	pod, _, err := g.Pod(ctx, Sites[0])
	if err != nil {
		return err
	}
	kill := l.Mark("sidecar-kill")
	if err := e.C.Kill(ctx, g.NS, pod, "sidecar"); err != nil {
		return fmt.Errorf("kill sidecar: %w", err)
	}
	// The kubelet restarts it after 10 s; give it time to boot and settle.
	if err := sleepCtx(ctx, 10*time.Second+3*g.T.PeerCheckInterval); err != nil {
		return err
	}
	if err := g.WaitActive(ctx, Sites[0], 1, time.Minute); err != nil {
		r.Failf("not healthy on %s after the sidecar came back: %v", Sites[0], err)
	}
	noFailover(ctx, g, r)
	if _, err := l.WaitAck(ctx, Sites[0], false, time.Now(), 20*time.Second); err != nil {
		r.Failf("writes do not resume on %s: %v", Sites[0], err)
	}
	end := l.Mark("end")
	rep := r.finish(ctx, l, -1)
	n, _ := refusedOn(&l.hist, Sites[0], kill, end)
	// A restarted sidecar fences a writable mysqld at boot until the
	// operator re-asserts it: a bounded write window, not a failover.
	r.Figure("window-s", rep.MaxWindow.Seconds())
	r.Notef("%d probes refused on %s; longest unavailability %s", n, Sites[0], rep.MaxWindow.Round(time.Millisecond))
	// The bound: two ticks of the sidecar and the debouncing of the
	// operator's passes, plus its arm of mysqld's lease fence, which waits
	// out two one-second lock waits (the event's DDL's, then a write
	// probe's) under the restarted sidecar's write hold before the step
	// goes on (docs/operator.md), and a second of slack.
	armWait := 3 * time.Second
	if bound := 2*g.T.PeerCheckInterval + time.Duration(g.T.FailureThreshold+2)*g.T.PollInterval + armWait; rep.MaxWindow > bound {
		r.Failf("writes unavailable for %s after the sidecar crash, more than %s", rep.MaxWindow, bound)
	}
	return nil
}
