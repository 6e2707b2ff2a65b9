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
	sw, err := switchOver(ctx, g, l, r, Sites[0], Sites[1])
	if err != nil {
		return err
	}
	rep := r.finish(ctx, l, -1)
	r.Figure("window-ms", float64(sw.Window.Milliseconds()))
	r.Figure("duration-s", sw.Duration.Seconds())
	r.Notef("status durationSeconds %d; window %s; longest unavailability %s", sw.Status.DurationSeconds,
		sw.Window.Round(time.Millisecond), rep.MaxWindow.Round(time.Millisecond))
	return nil
}

// switched is what a planned failover under the load measured.
type switched struct {
	// Window is from the writers' last acknowledged write on the old
	// primary to their first on the new one.
	Window time.Duration
	// Duration is from the annotation to Succeeded, as seen by polling.
	Duration time.Duration
	Status   *v1alpha1.PlannedFailoverStatus
}

// switchOver moves the primary from one site to another by annotation
// under the load, which keeps running, and measures the write window the
// same way every time: for planned-under-load, the bench and the
// reference that rolling-update compares its update's window with.
func switchOver(ctx context.Context, g *Group, l *Load, r *Result, from, to string) (switched, error) {
	asked := l.Mark("annotate " + to)
	if err := g.annotate(ctx, to); err != nil {
		return switched{}, err
	}
	p, err := g.waitPlanned(ctx, 90*time.Second)
	if err != nil {
		return switched{}, err
	}
	done := time.Now()
	if p.Phase != v1alpha1.PhaseSucceeded {
		return switched{}, fmt.Errorf("planned failover %s: %s: %s", p.Phase, p.Reason, p.Message)
	}
	if p.TransactionsLost == nil || *p.TransactionsLost != 0 {
		r.Failf("planned failover reports transactionsLost %v, want 0", p.TransactionsLost)
	}
	if _, err := l.WaitAck(ctx, to, false, asked, 30*time.Second); err != nil {
		return switched{}, err
	}
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return switched{}, err
	}
	ws := l.writerAttempts()
	last, ok1 := lastAck(ws, from)
	first, ok2 := firstAckAfter(ws, to, asked)
	if !ok1 || !ok2 {
		return switched{}, fmt.Errorf("no writes on %s before, or on %s after, the switch", from, to)
	}
	if last.End.After(first.End) {
		r.Failf("writers acknowledged on %s (id %d) after %s took writes", from, last.ID, to)
	}
	return switched{Window: first.End.Sub(last.End), Duration: done.Sub(asked), Status: p}, nil
}

// lastAck is the last acknowledged write on site among as.
func lastAck(as []load.Attempt, site string) (a load.Attempt, ok bool) {
	for _, x := range as {
		if x.OK && x.Site == site && (!ok || x.End.After(a.End)) {
			a, ok = x, true
		}
	}
	return a, ok
}
