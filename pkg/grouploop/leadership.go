package grouploop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// mayMakeWritable is the one rule in front of every step that makes a site
// writable (failover.Pass.MayMakeWritable, and the re-assertion): the
// pass's snapshot is at most one poll interval old on the monotonic clock
// (topology.MayMakeWritable), and this process still leads.
func (l *Loop) mayMakeWritable(ctx context.Context, fresh time.Time) error {
	started, observed := l.observeStarted, l.observedAt
	if fresh.After(observed) {
		started, observed = fresh, fresh
	}
	ok, why := topology.MayMakeWritable(topology.ActCheck{ObserveStarted: started,
		ObservedAt: observed, Now: l.env.Clock.Now(), PollInterval: l.interval,
		ProbeTimeout: l.probeTimeout(l.interval)})
	if !ok {
		return fmt.Errorf("%w: %s", failover.ErrMayNotMakeWritable, why)
	}
	if l.env.Leader != nil {
		if err := l.env.Leader.Held(ctx); err != nil {
			return fmt.Errorf("%w: %w", failover.ErrMayNotMakeWritable, err)
		}
	}
	return nil
}

// staleEvent records that a step was held back, once per kind of reason
// (the error's text changes with every pass's ages), and logs the detail.
func (l *Loop) staleEvent(g *v1alpha1.MysqlFailoverGroup, err error) {
	msg := "a step that makes a site writable waits for a fresh snapshot: the last one is older than the poll interval"
	if errors.Is(err, authority.ErrNotLeader) {
		msg = "a step that makes a site writable waits: this process does not hold the leader-election Lease"
	}
	l.log.Info("held back", "reason", err.Error())
	l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.ReasonStaleSnapshot, msg)
}
