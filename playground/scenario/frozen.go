package scenario

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/load"
)

func init() {
	register(Scenario{14, "frozen-site", "the primary's mysqld and sidecar are frozen past the lease, the other site is promoted, then they thaw: never two writers", frozenSite})
}

// thawAllowance bounds the writes a thawed site may still acknowledge: the
// sidecar and mysqld resume together, so statements that the site's pooled
// sessions send at that instant can commit while the sidecar's first act
// (the fence its expired lease calls for) is still on its way. Anything
// acknowledged later than this after the thaw is a second writer.
const thawAllowance = 500 * time.Millisecond

// poolSessions is how many pooled application sessions wait on the frozen site.
const poolSessions = 4

func frozenSite(ctx context.Context, e *Env) Result {
	return play(ctx, e, "frozen-site", Plan{}, freezeSite)
}

// freezeSite opens pooled sessions to site-a, freezes site-a's mysqld and
// sidecar together, waits for site-b's promotion (which must wait for
// site-a's lease deadline) and its first writes, then thaws both together,
// and at once every pooled session writes to site-a while the prober
// reconnects to it. Site-a's expired lease must be enforced before any of
// those writes gets through (within thawAllowance).
func freezeSite(ctx context.Context, g *Group, l *Load, r *Result) error {
	a, b := g.Sites[0], g.Sites[1]
	pod, ip, err := g.Pod(ctx, a)
	if err != nil {
		return err
	}
	pool := &load.Pool{Client: g.client(l.acct, time.Second), IDs: l.ids,
		Addr: net.JoinHostPort(ip, strconv.Itoa(routing.MySQLPort))}
	defer pool.Close()
	if err := pool.Open(ctx, poolSessions); err != nil {
		return err
	}
	frozen := l.Mark("freeze")
	if err := g.signalSite(ctx, pod, g.e.C.Freeze); err != nil {
		return fmt.Errorf("freeze %s: %w", a, err)
	}
	defer func() { _ = g.signalSite(context.Background(), pod, g.e.C.Thaw) }()
	if err := g.WaitActive(ctx, b, 2, 2*time.Minute); err != nil {
		return err
	}
	if _, err := l.WaitAck(ctx, b, false, frozen, 30*time.Second); err != nil {
		return err
	}
	if err := sleepCtx(ctx, time.Second); err != nil {
		return err
	}
	thaw := l.Mark("thaw")
	if err := g.signalSite(ctx, pod, g.e.C.Thaw); err != nil {
		return fmt.Errorf("thaw %s: %w", a, err)
	}
	l.AddProbes(pool.Burst(ctx, 3*time.Second))
	if err := sleepCtx(ctx, 2*g.T.PeerCheckInterval); err != nil {
		return err
	}
	mg, err := g.Wait(ctx, "lastFailover with transactionsLost", time.Minute, lossReported)
	if err != nil {
		return err
	}
	h := r.stop(ctx, l)
	r.judgeExcept(h, *mg.Status.LastFailover.TransactionsLost, func(o load.Overlap) bool {
		return inThawWindow(o, a, thaw)
	})
	judgeThaw(h, r, a, thaw)
	return nil
}

// inThawWindow tells whether an overlap is the thawed site's allowance seen
// from either side: a write site acknowledged inside another site's writable
// span, or another site's write inside a span of site's own acknowledged
// probes, both wholly within thawAllowance after the thaw. Anything else
// is a second writer.
func inThawWindow(o load.Overlap, site string, thaw time.Time) bool {
	end := thaw.Add(thawAllowance)
	switch site {
	case o.Other:
		return !o.At.Start.Before(thaw) && o.At.End.Before(end)
	case o.Site:
		return !o.From.Before(thaw) && o.To.Before(end)
	}
	return false
}

// judgeThaw measures the thaw window: from the thaw to the end of the last
// write site acknowledged, and fails past thawAllowance.
func judgeThaw(h *load.History, r *Result, site string, thaw time.Time) {
	var last load.Attempt
	n := 0
	for _, x := range append(append([]load.Attempt(nil), h.Attempts...), h.Probes...) {
		if x.OK && x.Site == site && !x.End.Before(thaw) {
			n++
			if x.End.After(last.End) {
				last = x
			}
		}
	}
	if n == 0 {
		r.Notef("%s acknowledged nothing after the thaw", site)
		r.Figure("thaw-window-ms", 0)
		return
	}
	window := last.End.Sub(thaw)
	r.Figure("thaw-window-ms", float64(window.Milliseconds()))
	r.Notef("%s acknowledged %d writes after the thaw, the last (id %d, %s) %s after it", site, n, last.ID, last.Writer,
		window.Round(time.Millisecond))
	if window > thawAllowance {
		r.Broken++
		r.Failf("%s, thawed with its lease long expired and %s promoted, acknowledged writes for %s after the thaw "+
			"(allowance %s): its sidecar did not fence before anything else", site, "another site", window.Round(time.Millisecond), thawAllowance)
	}
}

// signalSite freezes or thaws a site's mysqld and sidecar at the same time.
func (g *Group) signalSite(ctx context.Context, pod string, sig func(ctx context.Context, ns, pod, container string) error) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []string{"mysqld", "sidecar"} {
		wg.Go(func() { errs[i] = sig(ctx, g.NS, pod, c) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
