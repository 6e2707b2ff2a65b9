package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// salvageStopReserve is kept from SalvageFrom's deadline for stopping
// replication and reading the executed set once the wait is over.
const salvageStopReserve = time.Second

// SalvageFrom implements Instance. The server stays read-only throughout;
// replication is pointed at source as ReplicateFrom points it (same
// statement, account and TLS) and started with an UNTIL condition at
// until, so that nothing the source executed beyond until is applied.
func (in *instance) SalvageFrom(ctx context.Context, source Endpoint, creds Credentials, until gtid.Set) (gtid.Set, error) {
	verb := "salvage from " + source.String()
	var set gtid.Set
	if err := creds.TLS.validate(); err != nil {
		return set, wrap(verb, in.addr, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		return set, wrap(verb, in.addr, fmt.Errorf("%w: salvage needs a deadline", ErrInvalidConfig))
	}
	err := in.run(ctx, verb, 0, func(ctx context.Context, ex executor, d dialect) error {
		target, err := d.waitTarget(until)
		if err != nil {
			return err
		}
		if err := startSalvage(ctx, ex, d, source, creds, target, in.lockWaitSeconds()); err != nil {
			return err
		}
		dl, _ := ctx.Deadline()
		waitErr := in.salvageWait(ctx, ex, d, target, dl.Add(-salvageStopReserve))
		// Stopped whatever happened, with time of its own: a salvage is
		// never left running behind the failover.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), salvageStopReserve)
		defer cancel()
		stopErr := d.stopReplica(sctx, ex)
		set, err = d.executed(sctx, ex)
		if stopErr != nil {
			return fmt.Errorf("stop replica after salvage: %w", stopErr)
		}
		if waitErr != nil {
			return waitErr
		}
		return err
	})
	return set, err
}

// startSalvage points replication at source and starts it until target,
// the server kept read-only (it already is: only a replica is salvaged).
func startSalvage(ctx context.Context, ex executor, d dialect, source Endpoint, creds Credentials,
	target string, lockWait int) error {
	if err := d.setLockWaitTimeout(ctx, ex, lockWait); err != nil {
		return err
	}
	if err := d.setFenced(ctx, ex, true); err != nil {
		return fmt.Errorf("set read-only: %w", err)
	}
	rs, err := d.replicaStatus(ctx, ex)
	if err != nil {
		return err
	}
	if rs != nil {
		if err := d.stopReplica(ctx, ex); err != nil {
			return fmt.Errorf("stop replica: %w", err)
		}
	}
	if err := d.changeSource(ctx, ex, source, creds); err != nil {
		return fmt.Errorf("change source: %w", err)
	}
	if err := d.startReplicaUntil(ctx, ex, target); err != nil {
		return fmt.Errorf("start replica until %s: %w", target, err)
	}
	return nil
}

// salvageWait polls as wait does, and also ends, with ErrSalvageStopped,
// when the SQL thread stopped without an error short of target: the
// UNTIL condition met by another history (MariaDB compares seqs per
// domain, so a replica holding another server's write at that seq stops
// at once) or a STOP from elsewhere. Nothing more will be applied then.
func (in *instance) salvageWait(ctx context.Context, ex executor, d dialect, target string, deadline time.Time) error {
	slice := min(time.Second, in.cfg.ReadTimeout/2)
	for {
		if ok, err := d.reached(ctx, ex, target); err != nil || ok {
			return err
		}
		rs, err := d.replicaStatus(ctx, ex)
		switch {
		case err != nil:
			return err
		case rs == nil:
			return ErrNotReplica
		case rs.Err() != nil:
			return fmt.Errorf("salvage until %s: %w", target, rs.Err())
		case !rs.SQLRunning:
			// It may have stopped right after reaching target.
			if ok, err := d.reached(ctx, ex, target); err != nil || ok {
				return err
			}
			return fmt.Errorf("%w short of %s", ErrSalvageStopped, target)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: %s not reached in time", ErrTimeout, target)
		}
		if ok, err := d.waitFor(ctx, ex, target, min(left, slice)); err != nil || ok {
			return err
		}
	}
}
