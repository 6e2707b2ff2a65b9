package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/load"
)

func plannedUnderLoad(ctx context.Context, e *Env) Result {
	return play(ctx, e, "planned-under-load", Plan{}, plannedUnderLoadBody)
}

func plannedUnderLoadBody(ctx context.Context, g *Group, l *Load, r *Result) error {
	if err := plannedSwitch(ctx, g, l, r); err != nil {
		return err
	}
	return nil
}

// annotate asks for a planned failover.
func (g *Group) annotate(ctx context.Context, value string) error {
	_, err := g.e.C.Kubectl(ctx, "-n", g.NS, "annotate", "--overwrite", "mysqlfailovergroup", g.Name,
		v1alpha1.PlannedFailoverAnnotation+"="+value)
	return err
}

// waitPlanned waits until the planned failover ends and returns its status.
func (g *Group) waitPlanned(ctx context.Context, within time.Duration) (*v1alpha1.PlannedFailoverStatus, error) {
	mg, err := g.Wait(ctx, "planned failover over", within, func(mg *v1alpha1.MysqlFailoverGroup) error {
		p := mg.Status.PlannedFailover
		if p != nil && (p.Phase == v1alpha1.PhaseSucceeded || p.Phase == v1alpha1.PhaseFailed) {
			return nil
		}
		return fmt.Errorf("plannedFailover %+v", p)
	})
	if err != nil {
		return nil, err
	}
	return mg.Status.PlannedFailover, nil
}

// plannedSwitch moves the primary from site-a to site-b by annotation under
// the load, checks that nothing was lost, and records the write window
// (last write acknowledged by site-a to the first by site-b, through the
// writers) and the duration (annotation to Succeeded, as seen by polling).
func plannedSwitch(ctx context.Context, g *Group, l *Load, r *Result) error {
	asked := l.Mark("annotate")
	if err := g.annotate(ctx, Sites[1]); err != nil {
		return err
	}
	p, err := g.waitPlanned(ctx, 90*time.Second)
	if err != nil {
		return err
	}
	done := time.Now()
	if p.Phase != v1alpha1.PhaseSucceeded {
		return fmt.Errorf("planned failover %s: %s: %s", p.Phase, p.Reason, p.Message)
	}
	if p.TransactionsLost == nil || *p.TransactionsLost != 0 {
		r.Failf("planned failover reports transactionsLost %v, want 0", p.TransactionsLost)
	}
	if _, err := l.WaitAck(ctx, Sites[1], false, asked, 30*time.Second); err != nil {
		return err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return err
	}
	rep := r.finish(ctx, l, -1)
	last, ok1 := lastWriterAck(l, Sites[0])
	first, ok2 := firstAckAfter(l.hist.Attempts, Sites[1], asked)
	if !ok1 || !ok2 {
		return fmt.Errorf("no writes on %s before, or on %s after, the switch", Sites[0], Sites[1])
	}
	if last.End.After(first.End) {
		r.Failf("writers acknowledged on %s (id %d) after %s took writes", Sites[0], last.ID, Sites[1])
	}
	window := first.End.Sub(last.End)
	r.Figure("window-ms", float64(window.Milliseconds()))
	r.Figure("duration-s", done.Sub(asked).Seconds())
	r.Notef("status durationSeconds %d; window %s; longest unavailability %s", p.DurationSeconds,
		window.Round(time.Millisecond), rep.MaxWindow.Round(time.Millisecond))
	return nil
}

// lastWriterAck is the writers' last acknowledged write on site.
func lastWriterAck(l *Load, site string) (a load.Attempt, ok bool) {
	for _, x := range l.hist.Attempts {
		if x.OK && x.Site == site && (!ok || x.End.After(a.End)) {
			a, ok = x, true
		}
	}
	return a, ok
}
