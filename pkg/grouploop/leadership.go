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
// pass's snapshot is at most one poll interval old on the monotonic clock,
// and site's sidecar asked this operator within two peerCheckIntervals
// (topology.MayMakeWritable); and this process still leads.
func (l *Loop) mayMakeWritable(ctx context.Context, site string, peerCheck time.Duration, fresh time.Time) error {
	started, observed := l.observeStarted, l.observedAt
	if fresh.After(observed) {
		started, observed = fresh, fresh
	}
	chk := topology.ActCheck{ObserveStarted: started,
		ObservedAt: observed, Now: l.env.Clock.Now(), PollInterval: l.interval,
		ProbeTimeout: l.probeTimeout(l.interval), Site: site, PeerCheckInterval: peerCheck,
		SidecarAskedAt: l.sidecarAskedAt(site)}
	if ok, why := topology.MayMakeWritable(chk); !ok {
		if asking, _ := topology.SidecarAsking(chk); !asking {
			return fmt.Errorf("%w: %w: %s", failover.ErrMayNotMakeWritable, failover.ErrSidecarSilent, why)
		}
		return fmt.Errorf("%w: %s", failover.ErrMayNotMakeWritable, why)
	}
	if l.env.Leader != nil {
		if err := l.env.Leader.Held(ctx); err != nil {
			return fmt.Errorf("%w: %w", failover.ErrMayNotMakeWritable, err)
		}
	}
	return nil
}

// sidecarAskedAt is when site's sidecar last asked this operator for the
// view: zero when this process has not served it, and zero when the ask
// may have come from another Pod's sidecar than the one next to the mysqld
// being made writable (the site lists more than one Pod, or a Pod of it
// went away and is not proven stopped: certificates name the site, not
// the Pod).
func (l *Loop) sidecarAskedAt(site string) time.Time {
	if l.env.Registry == nil {
		return time.Time{}
	}
	sv := l.env.Registry.Sidecar(l.key, site)
	if sv.Pods() > 1 || l.goneUnproven(site) {
		return time.Time{}
	}
	return sv.LastServed()
}

// staleEvent records that a step was held back, once per kind of reason
// (the error's text changes with every pass's ages), and logs the detail.
func (l *Loop) staleEvent(g *v1alpha1.MysqlFailoverGroup, err error) {
	msg := "a step that makes a site writable waits for a fresh snapshot: the last one is older than the poll interval"
	reason := v1alpha1.ReasonStaleSnapshot
	switch {
	case errors.Is(err, authority.ErrNotLeader):
		msg = "a step that makes a site writable waits: this process does not hold the leader-election Lease"
	case errors.Is(err, failover.ErrSidecarSilent):
		msg = "a step that makes a site writable waits: the site's sidecar has not asked the operator for the view " +
			"within two peerCheckIntervals, so nothing would enforce its lease"
		reason = v1alpha1.ReasonSidecarSilent
	}
	l.log.Info("held back", "reason", err.Error())
	l.env.Notifier.EventOnChange(g, failover.EventWarning, reason, msg)
}
