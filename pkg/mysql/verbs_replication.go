package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// waitMargin is kept between a server-side wait's end and the context's
// deadline, so that the server answers "not yet" before the driver has to
// cut the connection.
const waitMargin = 50 * time.Millisecond

func (in *instance) WaitForGTID(ctx context.Context, set gtid.Set, timeout time.Duration) error {
	return in.run(ctx, "wait for gtid", timeout, func(ctx context.Context, ex executor, d dialect) error {
		target, err := d.waitTarget(set)
		if err != nil {
			return err
		}
		return in.wait(ctx, ex, d, target, timeout, false)
	})
}

func (in *instance) DrainRelayLog(ctx context.Context, timeout time.Duration) error {
	return in.run(ctx, "drain relay log", timeout, func(ctx context.Context, ex executor, d dialect) error {
		rs, err := d.replicaStatus(ctx, ex)
		if err != nil {
			return err
		}
		if rs == nil {
			return ErrNotReplica
		}
		if rs.Retrieved == "" {
			return nil // nothing received, nothing to apply
		}
		return in.wait(ctx, ex, d, rs.Retrieved, timeout, true)
	})
}

// wait polls in slices: has the target been reached, is replication still
// healthy, then a server-side wait of at most one slice. Slicing keeps each
// query well inside ReadTimeout and notices broken replication within a slice.
func (in *instance) wait(ctx context.Context, ex executor, d dialect, target string,
	timeout time.Duration, needReplica bool) error {
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-waitMargin).Before(deadline) {
		deadline = dl.Add(-waitMargin)
	}
	slice := min(time.Second, in.cfg.ReadTimeout/2)
	for {
		if ok, err := d.reached(ctx, ex, target); err != nil || ok {
			return err
		}
		rs, err := d.replicaStatus(ctx, ex)
		switch {
		case err != nil:
			return err
		case rs == nil && needReplica:
			return ErrNotReplica
		case rs != nil && rs.Err() != nil:
			return fmt.Errorf("waiting for %s: %w", target, rs.Err())
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: %s not reached within %s", ErrTimeout, target, timeout)
		}
		if ok, err := d.waitFor(ctx, ex, target, min(left, slice)); err != nil || ok {
			return err
		}
	}
}

// PromoteOptions is what a promotion must also do under the topology
// lock, right before the server is made writable.
type PromoteOptions struct {
	// SemiSync, when set, is the semi-sync part (the source's) the server
	// must have as it becomes writable. It is set again under the lock:
	// a salvage into the server by another operator process, between the
	// step that set it (failover.PrepareWritable) and this one, may have
	// given the server its replica part since.
	SemiSync *SemiSyncSettings
	// SemiSyncBestEffort: a failure to set SemiSync does not stop the
	// promotion (dataDurability preferred). Otherwise nothing is changed
	// and the error wraps ErrSemiSyncUnavailable or the server's.
	SemiSyncBestEffort bool
}

// Promotion is what Promote found and did.
type Promotion struct {
	// Executed is the executed GTID set captured once replication was
	// stopped, before the server was made writable.
	Executed gtid.Set
	// Retrieved is what the IO thread held received when replication was
	// stopped for the reset (MySQL Retrieved_Gtid_Set, MariaDB
	// Gtid_IO_Pos as a set: ReplicaStatus.RetrievedSet): the reset drops
	// whatever of it Executed lacks. Empty without replication.
	Retrieved gtid.Set
	// RetrievedUnknown: the received set could not be parsed; what the
	// reset dropped is unknown.
	RetrievedUnknown bool
	// SemiSyncErr is a SemiSync setting that failed under
	// SemiSyncBestEffort (the promotion went on).
	SemiSyncErr error
}

func (in *instance) Promote(ctx context.Context, opts PromoteOptions) (Promotion, error) {
	var p Promotion
	err := in.run(ctx, "promote", 0, func(ctx context.Context, ex executor, d dialect) error {
		// Ordered with a salvage into this server (topolock.go).
		unlock, err := lockTopology(ctx, ex, in.lockWaitSeconds(), in.lockIdleSeconds())
		if err != nil {
			return err
		}
		defer unlock()
		configured, err := stopForReset(ctx, ex, d, &p)
		if err != nil {
			return err
		}
		if opts.SemiSync != nil {
			s := *opts.SemiSync
			s.Promoting = true
			if err := applySemiSync(ctx, ex, d, s); err != nil {
				if !opts.SemiSyncBestEffort {
					return fmt.Errorf("semi-sync source part: %w", err)
				}
				p.SemiSyncErr = err
			}
		}
		if configured {
			if err := d.resetReplica(ctx, ex); err != nil {
				return fmt.Errorf("reset replica: %w", err)
			}
		}
		if p.Executed, err = d.executed(ctx, ex); err != nil {
			return fmt.Errorf("capture executed gtids: %w", err)
		}
		return makeWritable(ctx, ex, d)
	})
	return p, err
}

// stopForReset stops replication, if any is configured, and reads what its
// IO thread held received once stopped: the reset that follows discards
// whatever of it was not applied, so the caller can count it. A promotion
// whose semi-sync part stopped replication already (PrepareWritable)
// stops nothing more on the server; the statement is sent all the same.
func stopForReset(ctx context.Context, ex executor, d dialect, p *Promotion) (configured bool, err error) {
	rs, err := d.replicaStatus(ctx, ex)
	if err != nil || rs == nil {
		return false, err
	}
	if err := d.stopReplica(ctx, ex); err != nil {
		return true, fmt.Errorf("stop replica: %w", err)
	}
	if rs, err = d.replicaStatus(ctx, ex); err != nil || rs == nil {
		return rs != nil, err
	}
	set, perr := rs.RetrievedSet(d.flavor())
	p.Retrieved, p.RetrievedUnknown = set, perr != nil
	return true, nil
}

func (in *instance) ReplicateFrom(ctx context.Context, source Endpoint, creds Credentials) error {
	verb := "replicate from " + source.String()
	if err := creds.TLS.validate(); err != nil {
		return wrap(verb, in.addr, err)
	}
	return in.run(ctx, verb, 0, func(ctx context.Context, ex executor, d dialect) error {
		rs, err := d.replicaStatus(ctx, ex)
		if err != nil {
			return err
		}
		if rs != nil && alreadyReplicating(*rs, source, creds) {
			return nil
		}
		// A replica never takes application writes. Running writes may hold
		// read_only back: fail within lock_wait_timeout rather than hang.
		if err := d.setLockWaitTimeout(ctx, ex, in.lockWaitSeconds()); err != nil {
			return err
		}
		if err := d.setFenced(ctx, ex, true); err != nil {
			return fmt.Errorf("set read-only: %w", err)
		}
		if rs != nil {
			if err := d.stopReplica(ctx, ex); err != nil {
				return fmt.Errorf("stop replica: %w", err)
			}
		}
		if err := d.changeSource(ctx, ex, source, creds); err != nil {
			return fmt.Errorf("change source: %w", err)
		}
		if err := d.startReplica(ctx, ex); err != nil {
			return fmt.Errorf("start replica: %w", err)
		}
		return nil
	})
}

// alreadyReplicating: same source, user and TLS, SQL thread applying, IO
// thread connected (or retrying without an error yet).
func alreadyReplicating(rs ReplicaStatus, src Endpoint, c Credentials) bool {
	return rs.SourceHost == src.Host && rs.SourcePort == src.Port && rs.SourceUser == c.User && rs.UsesTLS(c.TLS) &&
		rs.SQLRunning && rs.LastSQLErrno == 0 && rs.LastIOErrno == 0 &&
		(rs.IORunning == ThreadYes || rs.IORunning == ThreadConnecting)
}

func (in *instance) StopReplication(ctx context.Context) error {
	return in.run(ctx, "stop replication", 0, func(ctx context.Context, ex executor, d dialect) error {
		rs, err := d.replicaStatus(ctx, ex)
		if err != nil || rs == nil {
			return err
		}
		return d.stopReplica(ctx, ex)
	})
}

func (in *instance) ErrantAgainst(ctx context.Context, source gtid.Set) (gtid.Set, error) {
	var set gtid.Set
	err := in.run(ctx, "errant transactions", 0, func(ctx context.Context, ex executor, d dialect) error {
		var err error
		set, err = d.errant(ctx, ex, source)
		return err
	})
	return set, err
}

// forgetReplication stops and resets replication if any is configured
// (RESET REPLICA ALL refuses to run while the threads do).
func forgetReplication(ctx context.Context, ex executor, d dialect) error {
	rs, err := d.replicaStatus(ctx, ex)
	if err != nil || rs == nil {
		return err
	}
	if err := d.stopReplica(ctx, ex); err != nil {
		return fmt.Errorf("stop replica: %w", err)
	}
	if err := d.resetReplica(ctx, ex); err != nil {
		return fmt.Errorf("reset replica: %w", err)
	}
	return nil
}
