package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func init() {
	register(Scenario{15, "errant-former-primary", "a cut-off primary takes writes until it fences; after the failover and the cooldown it heals as the new primary dies: it is never promoted with its discarded writes, and the loss stays reported", errantFormerPrimary})
}

// errantTimings are TestTimings with a shorter cooldown, so that the second
// failure comes after it without a long wait.
var errantTimings = Timings{PollInterval: time.Second, FailureThreshold: 2, LeaseTimeout: 6 * time.Second,
	PeerCheckInterval: 2 * time.Second, Cooldown: 20 * time.Second}

func errantFormerPrimary(ctx context.Context, e *Env) Result {
	return play(ctx, e, "errant-former-primary", Plan{Timings: errantTimings}, errantFormer)
}

// errantFormer isolates site-a from the operator and site-b: it takes
// writes (clients still reach it) until its lease fence, and the group
// fails over to site-b, losing them. After the cooldown, site-b's mysqld is
// killed and site-a healed at the same moment, so no pass sees both
// healthy. Site-a holds transactions outside the authority's history: it
// must never be made active with them, it must be shown divergent, and the
// first failover's loss must stay in status.
func errantFormer(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	cut := l.Mark("isolate")
	for _, other := range []string{"operator", b} {
		if err := g.e.C.Partition(ctx, a, other); err != nil {
			return fmt.Errorf("partition %s %s: %w", a, other, err)
		}
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, b, false, cut, 30*time.Second); err != nil {
		return err
	}
	mg, err := g.Get(ctx)
	if err != nil {
		return err
	}
	if mg.Status.LastFailover == nil {
		return fmt.Errorf("no lastFailover after the failover to %s", b)
	}
	// Its loss is accounted once site-a can be read again: after the heal.
	first := *mg.Status.LastFailover
	if _, err := l.WaitAck(ctx, a, true, cut, 0); err != nil {
		r.Failf("%s took no write after the cut: nothing errant to test", a)
	}
	if err := sleepCtx(ctx, time.Until(first.Time.Add(g.T.Cooldown+2*time.Second))); err != nil {
		return err
	}
	w := g.watch(ctx)
	defer w.stop()
	if err := g.killAndHeal(ctx, l); err != nil {
		return err
	}
	// site-b's mysqld is back 10 s after the kill; wait well past it.
	if err := g.WaitActive(ctx, b, 2, time.Minute); err != nil {
		r.Failf("%s not active again after its restart: %v", b, err)
	}
	if _, err := l.WaitAck(ctx, b, false, time.Now(), 30*time.Second); err != nil {
		r.Failf("%v", err)
	}
	seen := w.stop()
	r.Notef("status after the kill: %s", history(seen, cut))
	lost := g.checkLossKept(ctx, r, first)
	if s, ok := firstActive(seen, a, 3); ok {
		r.Broken++
		r.Failf("%s was made active at generation %d, holding the %d transactions the first failover discarded "+
			"and missing %s's since", a, s.Gen, lost, b)
	}
	g.checkDivergent(ctx, r, a)
	return g.finishAfterFailovers(ctx, l, r, lost)
}

// killAndHeal kills the active site-b's mysqld and heals site-a at once.
func (g *Group) killAndHeal(ctx context.Context, l *Load) error {
	b := g.Sites[1]
	pod, _, err := g.Pod(ctx, b)
	if err != nil {
		return err
	}
	l.Mark("kill-b")
	if err := g.e.C.Kill(ctx, g.NS, pod, "mysqld"); err != nil {
		return fmt.Errorf("kill %s's mysqld: %w", b, err)
	}
	l.Mark("heal-a")
	if err := g.e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	return nil
}

// finishAfterFailovers finishes the history, allowing the loss the first
// failover reported plus whatever later failovers reported.
func (g *Group) finishAfterFailovers(ctx context.Context, l *Load, r *Result, lost int64) error {
	mg, err := g.Get(ctx)
	if err != nil {
		return err
	}
	allow := lost
	if lf := mg.Status.LastFailover; lf != nil && lf.TransactionsLost != nil && mg.Status.TopologyGeneration > 2 {
		allow += *lf.TransactionsLost
	}
	r.finish(ctx, l, allow)
	return nil
}

// checkLossKept checks that status still reports the first failover, with
// its loss accounted: as lastFailover, or in a failover history when status
// has one. It returns that loss (0 when it is not reported).
func (g *Group) checkLossKept(ctx context.Context, r *Result, first v1alpha1.FailoverRecord) int64 {
	out, err := g.e.C.Kubectl(ctx, "-n", g.NS, "get", "mysqlfailovergroup", g.Name, "-o", "json")
	if err != nil {
		r.Failf("read status: %v", err)
		return 0
	}
	var raw struct {
		Status struct {
			LastFailover    *v1alpha1.FailoverRecord  `json:"lastFailover"`
			FailoverHistory []v1alpha1.FailoverRecord `json:"failoverHistory"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		r.Failf("decode status: %v", err)
		return 0
	}
	records := raw.Status.FailoverHistory
	if raw.Status.LastFailover != nil {
		records = append(records, *raw.Status.LastFailover)
	}
	for _, f := range records {
		if f.From != first.From || f.To != first.To || !f.Time.Equal(&first.Time) {
			continue
		}
		if f.TransactionsLost == nil || *f.TransactionsLost == 0 {
			r.Broken++
			r.Failf("the first failover (%s -> %s) reports no loss, though %s took writes after it was cut off", f.From, f.To, f.From)
			return 0
		}
		r.Notef("the first failover (%s -> %s) reports %d transactions lost (%s)", f.From, f.To, *f.TransactionsLost, f.LostGtidSet)
		return *f.TransactionsLost
	}
	r.Broken++
	now := "none"
	if lf := raw.Status.LastFailover; lf != nil {
		now = fmt.Sprintf("%s -> %s at %s", lf.From, lf.To, lf.Time.UTC().Format(time.TimeOnly))
	}
	r.Failf("status no longer reports the first failover (%s -> %s at %s) or its loss: lastFailover is now %s, "+
		"and no failover history keeps it", first.From, first.To, first.Time.UTC().Format(time.TimeOnly), now)
	return 0
}

// checkDivergent checks that status shows site divergent, or that a
// divergence Event was raised.
func (g *Group) checkDivergent(ctx context.Context, r *Result, site string) {
	mg, err := g.Get(ctx)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	for _, s := range mg.Status.Sites {
		if s.Name == site && s.DivergentGtid != "" {
			r.Notef("%s shown divergent: %s", site, s.DivergentGtid)
			return
		}
	}
	if ev := g.events(ctx, "Diverge"); ev != "" {
		r.Notef("divergence events: %s", ev)
		return
	}
	r.Failf("%s holds writes outside the authority's history, but status does not show it divergent and no Event says so", site)
}
