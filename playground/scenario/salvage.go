package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{22, "primary-killed-salvage", "the primary builds a tail its replica lacks and is killed, its sidecar frozen: " +
		"the new primary takes the tail from its binlogs (salvage); no acknowledged write lost", primaryKilledSalvage})
}

// salvageTimings keep the lease (30 s) well beyond the killed mysqld's
// restart (10 s, env.go): the old primary's fence is then confirmed by the
// operator's SQL fence on the restarted, read-only mysqld, whose binlogs
// can be read, rather than by the lease running out while it is down.
var salvageTimings = Timings{PollInterval: time.Second, FailureThreshold: 2, LeaseTimeout: 30 * time.Second,
	PeerCheckInterval: 2 * time.Second, Cooldown: time.Minute}

// salvageTailWindow is how long site-b's replication feed is cut under
// the load before the kill: site-a's tail.
const salvageTailWindow = 5 * time.Second

// primaryKilledSalvage: asynchronous replication, salvage on. site-a is
// cut off from site-b for a few seconds under the writers, so it
// acknowledges a tail site-b never receives. Then site-a's sidecar is
// frozen (no mysqld-down report can confirm the fence) and its mysqld
// killed. Once the failover is in flight, site-b's IO thread is stopped
// (the operator leaves a replica alone while a failover is in flight) and
// the sites healed: the tail can reach site-b only through the salvage.
// When site-a's mysqld is back, read-only, the operator's SQL fence
// reaches it, site-b takes the tail and is promoted.
func primaryKilledSalvage(ctx context.Context, e *Env) Result {
	p := Plan{Timings: salvageTimings, Extra: "  failover: {salvageTimeout: 30s}\n"}
	return play(ctx, e, "primary-killed-salvage", p, salvageBody)
}

func salvageBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	e, a, b := g.e, Sites[0], Sites[1]
	admin, err := g.admin(ctx)
	if err != nil {
		return err
	}
	pod, _, err := g.Pod(ctx, a)
	if err != nil {
		return err
	}
	cut := l.Mark("cut-feed")
	if err := e.C.Partition(ctx, a, b); err != nil {
		return fmt.Errorf("partition %s %s: %w", a, b, err)
	}
	if err := sleepCtx(ctx, salvageTailWindow); err != nil {
		return err
	}
	l.Mark("freeze-sidecar")
	if err := e.C.Freeze(ctx, g.NS, pod, "sidecar"); err != nil {
		return fmt.Errorf("freeze %s's sidecar: %w", a, err)
	}
	defer func() { _ = e.C.Thaw(context.Background(), g.NS, pod, "sidecar") }()
	kill := l.Mark("kill")
	if err := e.C.Kill(ctx, g.NS, pod, "mysqld"); err != nil {
		return fmt.Errorf("kill mysqld: %w", err)
	}
	fo, err := g.inFlight(ctx, 30*time.Second)
	if err != nil {
		return err
	}
	r.Notef("failover in flight %.2fs after the kill, at step %q", time.Since(kill).Seconds(), fo.Step)
	l.Mark("stop-io-heal")
	if err := admin.Exec(ctx, g.SiteAddrs()[b], "STOP SLAVE IO_THREAD"); err != nil {
		return fmt.Errorf("stop %s's IO thread: %w", b, err)
	}
	if err := e.C.HealAll(ctx); err != nil {
		return fmt.Errorf("heal: %w", err)
	}
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, b, false, kill, 30*time.Second); err != nil {
		return err
	}
	l.Mark("thaw")
	if err := e.C.Thaw(ctx, g.NS, pod, "sidecar"); err != nil {
		r.Notef("thaw %s's sidecar: %v", a, err)
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return err
	}
	judgeSalvage(ctx, g, l, r, mg, cut, kill)
	return nil
}

// judgeSalvage checks the failover record, the Event and the history:
// site-a acknowledged writes after the feed cut (the tail), the salvage
// brought them, nothing acknowledged was lost and nothing was reported lost.
func judgeSalvage(ctx context.Context, g *Group, l *Load, r *Result, mg *v1alpha1.MysqlFailoverGroup, cut, kill time.Time) {
	a, b := Sites[0], Sites[1]
	lf := mg.Status.LastFailover
	if lf.Kind != v1alpha1.KindEmergency || lf.From != a || lf.To != b {
		r.Failf("lastFailover %s %s -> %s, want emergency %s -> %s", lf.Kind, lf.From, lf.To, a, b)
	}
	lost := *lf.TransactionsLost
	r.Figure("salvaged-transactions", float64(lf.SalvagedTransactions))
	r.Figure("transactions-lost", float64(lost))
	if lf.SalvagedTransactions <= 0 {
		r.Failf("salvagedTransactions %d: the tail did not come through the salvage; events: %s",
			lf.SalvagedTransactions, g.events(ctx, "Salvage"))
	}
	if lost != 0 {
		r.Failf("transactionsLost %d (%s), want 0: the salvage should have brought the whole tail", lost, lf.LostGtidSet)
	}
	ev := g.events(ctx, v1alpha1.EventTailSalvaged)
	if ev == "" {
		r.Failf("no %s Event; salvage events: %s", v1alpha1.EventTailSalvaged, g.events(ctx, "Salvage"))
	} else {
		r.Notef("%s", ev)
	}
	h := r.stop(ctx, l)
	rep := r.judge(h, -1)
	r.Figure("lost-acked", float64(len(rep.Lost)))
	tail := ackedBetween(h, a, cut, kill)
	r.Figure("tail-acked", float64(tail))
	if tail == 0 {
		r.Failf("%s acknowledged no write between the feed cut and the kill: no tail to salvage", a)
	}
	first, ok := firstAckAfter(h.Attempts, b, kill)
	if !ok {
		r.Failf("no write acknowledged by %s after the kill", b)
		return
	}
	r.Figure("rto-s", first.End.Sub(kill).Seconds())
	r.Notef("%d writes acknowledged by %s after the feed cut; salvagedTransactions %d, transactionsLost %d, "+
		"%d acknowledged writes lost; first write on %s %.2fs after the kill",
		tail, a, lf.SalvagedTransactions, lost, len(rep.Lost), b, first.End.Sub(kill).Seconds())
}

// ackedBetween counts the acknowledged writes (writers' and probes') of
// site that started after from and ended before to.
func ackedBetween(h *load.History, site string, from, to time.Time) int {
	n := 0
	for _, x := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if x.OK && x.Site == site && x.Start.After(from) && x.End.Before(to) {
			n++
		}
	}
	return n
}
