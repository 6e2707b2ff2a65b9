package scenario

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() {
	register(Scenario{16, "sidecar-restart-island", "three sites: a third site's sidecar that held the new generation restarts in place on an island with the cut-off primary: the primary fences before the new one takes writes", sidecarRestartIsland})
}

// islandTimings have a lease long enough to outlast the restart of a
// sidecar container (10 s in the scenarios' cluster).
var islandTimings = Timings{PollInterval: time.Second, FailureThreshold: 2, LeaseTimeout: 30 * time.Second,
	PeerCheckInterval: 2 * time.Second, Cooldown: time.Minute}

func sidecarRestartIsland(ctx context.Context, e *Env) Result {
	plan := Plan{Timings: islandTimings, Sites: append(append([]string(nil), Sites...), ThirdSite)}
	return play(ctx, e, "sidecar-restart-island", plan, restartOnIsland)
}

// restartOnIsland cuts site-a off from everyone (clients still reach it):
// the operator fails over and publishes generation 2 naming site-b, and
// site-c's sidecar adopts it and reports so. Then site-c loses the operator
// and site-b, its sidecar container alone restarts (same Pod), and site-a
// and site-c reach each other again: site-c's new sidecar process can hear
// nobody but site-a. The operator, counting site-c's earlier adoption,
// promotes site-b at site-a's lease deadline, so site-a must have fenced by
// then: whatever the restarted sidecar serves must not renew site-a's lease.
func restartOnIsland(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b, c := g.Sites[0], g.Sites[1], g.Sites[2]
	w := g.watch(ctx)
	defer w.stop()
	// site-c first, so site-b is the freshest replica and the target.
	if err := g.e.C.Partition(ctx, a, c); err != nil {
		return err
	}
	if err := sleepCtx(ctx, time.Second); err != nil {
		return err
	}
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	if err := g.heldBy(ctx, c, b, l); err != nil {
		return err
	}
	if err := g.restartSidecarOnIsland(ctx, c, l, r); err != nil {
		return err
	}
	promoted := g.WaitActive(ctx, b, 2, time.Until(cut.Add(g.T.LeaseTimeout+3*g.T.PeerCheckInterval+20*time.Second)))
	if promoted == nil {
		// Let both run a while: a second writer shows in the probes.
		_ = sleepCtx(ctx, 5*time.Second)
	} else {
		r.Notef("%s not promoted: %v", b, promoted)
	}
	r.Notef("%s's sidecar serves %s; %s's holds %s", c, g.viewNote(ctx, c), a, g.viewNote(ctx, a))
	l.Mark("heal")
	if err := g.e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", 2*time.Minute, lossReported)
	if err != nil {
		return err
	}
	r.finish(ctx, l, *mg.Status.LastFailover.TransactionsLost)
	r.Notef("status: %s", history(w.stop(), cut))
	if last, ok := lastAckOn(&l.hist, a); ok {
		r.Notef("%s's last acknowledged write %.2fs after the cut", a, last.End.Sub(cut).Seconds())
		if first, ok := firstAckOn(&l.hist, b, cut); ok && !first.Start.After(last.End) {
			r.Broken++
			r.Failf("%s took writes from %.2fs after the cut while %s acknowledged until %.2fs: %s's restarted sidecar "+
				"renewed %s's lease", b, first.Start.Sub(cut).Seconds(), a, last.End.Sub(cut).Seconds(), c, a)
		}
	}
	return nil
}

// heldBy waits until site's sidecar holds generation 2 naming target, and
// one more tick so that its report of it has reached the operator.
func (g *Group) heldBy(ctx context.Context, site, target string, l *Load) error {
	if _, err := g.waitSidecarGeneration(ctx, site, 2, time.Minute); err != nil {
		return err
	}
	l.Mark(site + "-holds-generation-2")
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	v, err := g.sidecarView(cctx, site)
	cancel()
	if err != nil {
		return err
	}
	if v.ActiveSite != target {
		return fmt.Errorf("the failover targets %s, not %s: the island cannot be set up", v.ActiveSite, target)
	}
	return sleepCtx(ctx, g.T.PeerCheckInterval+500*time.Millisecond)
}

// restartSidecarOnIsland cuts site off from the operator and the group's
// second site, kills its sidecar container (the kubelet restarts it in the
// same Pod), heals site with the first site, and waits until the new
// sidecar process answers its peers.
func (g *Group) restartSidecarOnIsland(ctx context.Context, site string, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, site, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", site, other, err)
		}
	}
	pod, err := g.sitePodObject(ctx, site)
	if err != nil {
		return err
	}
	before := restarts(pod, "sidecar")
	kill := l.Mark("restart-" + site + "-sidecar")
	if err := g.e.C.Kill(ctx, g.NS, pod.Name, "sidecar"); err != nil {
		return fmt.Errorf("kill %s's sidecar: %w", site, err)
	}
	if err := g.e.C.Heal(ctx, a, site); err != nil {
		return fmt.Errorf("heal %s %s: %w", a, site, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := g.e.C.Client.CoreV1().Pods(g.NS).Get(ctx, pod.Name, metav1.GetOptions{})
		since, ok := runningSince(p, "sidecar")
		if err == nil && p.UID == pod.UID && ok && (restarts(p, "sidecar") > before || since.After(kill)) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's sidecar not running again in Pod %s within a minute (%v)", site, pod.Name, err)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	r.Notef("%s's sidecar running again %.1fs after the kill, in the same Pod %s", site, time.Since(kill).Seconds(), pod.Name)
	// Its first ticks: it asks the operator, site-b and site-a.
	return sleepCtx(ctx, 2*g.T.PeerCheckInterval)
}

// restarts is a container's restart count.
func restarts(p *corev1.Pod, container string) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	return 0
}

// runningSince says whether a container is running, and since when.
func runningSince(p *corev1.Pod, container string) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Running != nil {
			return cs.State.Running.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}
