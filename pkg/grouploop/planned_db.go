package grouploop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// The verbs below make conns a failover.PlannedDB.
var _ failover.PlannedDB = (*conns)(nil)

// Unfence implements failover.PlannedDB.
func (c *conns) Unfence(ctx context.Context, site string) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	if err := sc.inst.Unfence(ctx); err != nil {
		if errors.Is(err, mysql.ErrUnfenceReplicating) || errors.Is(err, mysql.ErrTopologyLockBusy) {
			return fmt.Errorf("unfence %s: %w: %w", site, failover.ErrUnfenceRefused, err)
		}
		return fmt.Errorf("unfence %s: %w", site, err)
	}
	if c.promoted != nil {
		c.promoted(site) // its sidecar releases its write hold at once
	}
	return nil
}

// KillAppConnections implements failover.PlannedDB.
func (c *conns) KillAppConnections(ctx context.Context, site string) (int, error) {
	sc, err := c.get(site)
	if err != nil {
		return 0, err
	}
	n, err := sc.inst.KillAppConnections(ctx)
	if err != nil {
		return n, fmt.Errorf("kill application connections on %s: %w", site, err)
	}
	return n, nil
}

// WaitForGTID implements failover.PlannedDB: a timeout is failover.ErrLagPending.
func (c *conns) WaitForGTID(ctx context.Context, site string, set gtid.Set, timeout time.Duration) error {
	sc, err := c.get(site)
	if err != nil {
		return err
	}
	err = sc.inst.WaitForGTID(ctx, set, timeout)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mysql.ErrTimeout):
		return fmt.Errorf("wait for %s: %w: %w", site, failover.ErrLagPending, err)
	}
	return fmt.Errorf("wait for %s: %w", site, err)
}

// Executed implements failover.PlannedDB.
func (c *conns) Executed(ctx context.Context, site string) (gtid.Set, error) {
	st, err := c.Status(ctx, site)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("read %s's GTIDs: %w", site, err)
	}
	return st.Executed, nil
}

// CheckReplica implements failover.PlannedDB.
func (c *conns) CheckReplica(ctx context.Context, site string) error {
	st, err := c.Status(ctx, site)
	if err != nil {
		return fmt.Errorf("read %s's replication: %w", site, err)
	}
	rs := st.Replica
	switch {
	case rs == nil:
		return fmt.Errorf("%w: %s has no replication configured", failover.ErrNotReplicating, site)
	case rs.Err() != nil:
		return fmt.Errorf("%w: %s: %w", failover.ErrNotReplicating, site, rs.Err())
	case rs.IORunning == mysql.ThreadNo:
		return fmt.Errorf("%w: %s's IO thread is stopped", failover.ErrNotReplicating, site)
	}
	return nil
}
