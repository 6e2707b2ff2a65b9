package sidecar

import (
	"context"
	"time"
)

// Stepper runs a Runner's wake-ups one at a time, for a caller that owns
// the clock: Run drives one with the Clock's timer; a simulation steps one
// on its own logical time, with no goroutine and no timer. Between two
// calls nothing of the Runner runs but its HTTP handlers. A Stepper is not
// safe for concurrent use.
type Stepper struct {
	r     *Runner
	sched *schedule
	// at and kind are the wake-up planned last (plan).
	at   time.Time
	kind wakeKind
}

// Start does what Run does first: it fences a writable mysqld at once
// (the boot safety net, check), and plans the first tick at the Clock's now.
func (r *Runner) Start(ctx context.Context) *Stepper {
	r.check(ctx)
	return &Stepper{r: r, sched: newSchedule(r.cfg.PeerCheckInterval, r.cfg.RefreshGap, r.cfg.Clock.Now())}
}

// Next is when the next wake-up is due, planned at the Clock's now with
// the refresh requests made since the last call (Refresh, and the ticks
// the Runner asks for itself). Fire runs it.
func (s *Stepper) Next() time.Time {
	for {
		select {
		case <-s.r.refresh:
			s.sched.request()
			continue
		default:
		}
		return s.plan()
	}
}

// plan plans the next wake-up at the Clock's now.
func (s *Stepper) plan() time.Time {
	s.at, s.kind = s.sched.wake(s.r.cfg.Clock.Now(), s.r.leaseDeadline())
	return s.at
}

// Fire runs the wake-up planned last, once its time has come: a lease
// check without gathering, or a periodic or refresh tick.
func (s *Stepper) Fire(ctx context.Context) {
	r := s.r
	if s.kind == wakeLease {
		r.check(ctx)
		return
	}
	s.sched.ticked(r.cfg.Clock.Now(), s.kind)
	if s.kind == wakeRefresh {
		r.metrics.refreshTicks.Inc()
	}
	began := r.cfg.Clock.Now()
	r.Tick(ctx)
	r.log.Debug("tick", "kind", s.kind.String(), "took", r.cfg.Clock.Since(began).String())
}
