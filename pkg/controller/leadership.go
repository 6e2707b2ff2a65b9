package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Leadership tells whether this operator process holds leadership now. It
// is asked right before every step that makes a site writable; nil (leader
// election off) means this process is the only one.
type Leadership interface {
	Held(ctx context.Context) error
}

// LockLeadership reads the manager's leader-election lock: held means the
// lock names this process (Lock.Identity) and its last renewal plus the
// lease duration, both written by this process by its own clock, is still
// ahead of Now.
type LockLeadership struct {
	Lock resourcelock.Interface
	Now  func() time.Time
}

// Held implements Leadership.
func (l LockLeadership) Held(ctx context.Context) error {
	rec, _, err := l.Lock.Get(ctx)
	if err != nil {
		return fmt.Errorf("%w: read %s: %w", ErrNotLeader, l.Lock.Describe(), err)
	}
	if rec.HolderIdentity != l.Lock.Identity() {
		return fmt.Errorf("%w: %s is held by %q", ErrNotLeader, l.Lock.Describe(), rec.HolderIdentity)
	}
	until := rec.RenewTime.Add(time.Duration(rec.LeaseDurationSeconds) * time.Second)
	if !l.Now().Before(until) {
		return fmt.Errorf("%w: %s expired at %s by its own record", ErrNotLeader, l.Lock.Describe(),
			until.Format(time.RFC3339))
	}
	return nil
}

// mayMakeWritable is the one rule in front of every step that makes a site
// writable (failover.Pass.MayMakeWritable, and the re-assertion): the
// pass's snapshot is at most one poll interval old on the monotonic clock
// (topology.MayMakeWritable), and this process still leads.
func (l *groupLoop) mayMakeWritable(ctx context.Context, fresh time.Time) error {
	started, observed := l.observeStarted, l.observedAt
	if fresh.After(observed) {
		started, observed = fresh, fresh
	}
	ok, why := topology.MayMakeWritable(topology.ActCheck{ObserveStarted: started,
		ObservedAt: observed, Now: l.op.clock.Now(), PollInterval: l.interval,
		ProbeTimeout: l.probeTimeout(l.interval)})
	if !ok {
		return fmt.Errorf("%w: %s", failover.ErrMayNotMakeWritable, why)
	}
	if l.op.leader != nil {
		if err := l.op.leader.Held(ctx); err != nil {
			return fmt.Errorf("%w: %w", failover.ErrMayNotMakeWritable, err)
		}
	}
	return nil
}

// staleEvent records that a step was held back, once per kind of reason
// (the error's text changes with every pass's ages), and logs the detail.
func (l *groupLoop) staleEvent(g *v1alpha1.MysqlFailoverGroup, err error) {
	msg := "a step that makes a site writable waits for a fresh snapshot: the last one is older than the poll interval"
	if errors.Is(err, ErrNotLeader) {
		msg = "a step that makes a site writable waits: this process does not hold the leader-election Lease"
	}
	l.log.Info("held back", "reason", err.Error())
	l.op.notifier.EventOnChange(g, failover.EventWarning, v1alpha1.ReasonStaleSnapshot, msg)
}
