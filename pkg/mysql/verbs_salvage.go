package mysql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// salvageStopReserve is kept from SalvageFrom's deadline for stopping
// replication and reading the executed set once the wait is over;
// salvageStopTimeout bounds that stop, on a connection of its own.
const (
	salvageStopReserve = time.Second
	salvageStopTimeout = 2 * time.Second
)

// SalvageFrom implements Instance. The server must be read-only already
// (only a fenced replica is salvaged): a writable one is refused with
// ErrSalvageTargetWritable and left untouched, since it may be a primary
// another operator promoted. The check and the start run under the
// server's topology lock, which Promote takes too (topolock.go), and the
// server is read again right after the start. Replication is pointed at source as
// ReplicateFrom points it (same statement, account and TLS) and started
// with an UNTIL condition at until, so that nothing the source executed
// beyond until is applied. Once the source was pointed at, replication
// is stopped whatever happened, on a fresh connection with time of its
// own: a cancelled ctx or a dead session does not leave the server
// replicating from the old primary.
func (in *instance) SalvageFrom(ctx context.Context, source Endpoint, creds Credentials, until, expect gtid.Set,
	part *SemiSyncSettings) (gtid.Set, error) {
	verb := "salvage from " + source.String()
	if err := creds.TLS.validate(); err != nil {
		return gtid.Set{}, wrap(verb, in.addr, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		return gtid.Set{}, wrap(verb, in.addr, fmt.Errorf("%w: salvage needs a deadline", ErrInvalidConfig))
	}
	pointed := false
	err := in.run(ctx, verb, 0, func(ctx context.Context, ex executor, d dialect) error {
		target, err := d.waitTarget(until)
		if err != nil {
			return err
		}
		// Ordered with a promotion of this server (topolock.go): from the
		// read-only check to the start, no promotion runs here.
		unlock, err := lockTopology(ctx, ex, in.lockWaitSeconds(), in.lockIdleSeconds())
		if err != nil {
			return err
		}
		err = startSalvage(ctx, ex, d, salvageStart{source: source, creds: creds, target: target, expect: expect, part: part},
			in.lockWaitSeconds(), &pointed)
		unlock()
		if err != nil {
			return err
		}
		dl, _ := ctx.Deadline()
		return in.salvageWait(ctx, ex, d, target, dl.Add(-salvageStopReserve))
	})
	if !pointed {
		return gtid.Set{}, err
	}
	set, stopErr := in.stopSalvage(ctx)
	if stopErr != nil {
		return set, errors.Join(err, stopErr)
	}
	return set, err
}

// stopSalvage stops replication and reads the executed set on a new
// session, within salvageStopTimeout of now even when ctx is done.
func (in *instance) stopSalvage(ctx context.Context) (gtid.Set, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), salvageStopTimeout)
	defer cancel()
	var set gtid.Set
	err := in.run(sctx, "stop salvage", 0, func(ctx context.Context, ex executor, d dialect) error {
		if err := d.stopReplica(ctx, ex); err != nil {
			return fmt.Errorf("stop replica after salvage: %w", err)
		}
		var err error
		set, err = d.executed(ctx, ex)
		return err
	})
	return set, err
}

// salvageChecked, when set (by tests only), runs right after the target
// was read read-only, before its replication is changed.
var salvageChecked func()

// salvageStart is what startSalvage points the server at, and what it
// must still be: its executed set as the caller read it (expect).
type salvageStart struct {
	source Endpoint
	creds  Credentials
	target string
	expect gtid.Set
	// part is the server's semi-sync part under source, set once the
	// checks passed and replication is stopped (nil: left as it is).
	part *SemiSyncSettings
}

// startSalvage checks the server is read-only, holds the executed set the
// caller read and replicates from the source, then stops replication,
// gives the server its semi-sync part (s.part), points replication at
// source and starts it until target; *pointed is set once the source may
// have been changed (from then on replication must be stopped).
//
// The last two checks keep a deposed leader's salvage off a server a new
// leader promoted since, even one fenced again later: its executed set
// grew (its own writes) and RESET REPLICA ALL, or a repoint, changed its
// source. Applying the old primary's tail there would diverge it.
func startSalvage(ctx context.Context, ex executor, d dialect, s salvageStart, lockWait int, pointed *bool) error {
	source, creds, target := s.source, s.creds, s.target
	if err := d.setLockWaitTimeout(ctx, ex, lockWait); err != nil {
		return err
	}
	fenced, _, err := d.readOnly(ctx, ex)
	if err != nil {
		return fmt.Errorf("read read-only: %w", err)
	}
	if !fenced {
		return ErrSalvageTargetWritable
	}
	if salvageChecked != nil {
		salvageChecked()
	}
	now, err := d.executed(ctx, ex)
	if err != nil {
		return fmt.Errorf("read executed gtids: %w", err)
	}
	if !now.Equal(s.expect) {
		return fmt.Errorf("%w: it holds %s, read as %s", ErrSalvageTargetMoved, now, s.expect)
	}
	rs, err := d.replicaStatus(ctx, ex)
	if err != nil {
		return err
	}
	if rs == nil || rs.Source() != source {
		return fmt.Errorf("%w: it does not replicate from %s any more", ErrSalvageTargetMoved, source)
	}
	*pointed = true
	if err := d.stopReplica(ctx, ex); err != nil {
		return fmt.Errorf("stop replica: %w", err)
	}
	// Under the lock and after the checks: a server a promotion made
	// writable is refused above before its semi-sync part is touched.
	// Replication is stopped, so the IO thread takes it at the start.
	if s.part != nil {
		// Promoting: replication stays stopped (the start below connects
		// with the new part), its IO thread is not restarted toward the
		// old source first. A server without semi-sync has no source part
		// to leave on.
		part := *s.part
		part.Promoting = true
		if err := applySemiSync(ctx, ex, d, part); err != nil && !errors.Is(err, ErrSemiSyncUnavailable) {
			return fmt.Errorf("semi-sync replica part: %w", err)
		}
	}
	if err := d.changeSource(ctx, ex, source, creds); err != nil {
		return fmt.Errorf("change source: %w", err)
	}
	if err := d.startReplicaUntil(ctx, ex, target); err != nil {
		return fmt.Errorf("start replica until %s: %w", target, err)
	}
	// Read again on the same session: a step that makes servers writable
	// without the topology lock (Unfence) may have run since the check.
	// The caller stops replication at once on this error.
	fenced, _, err = d.readOnly(ctx, ex)
	switch {
	case err != nil:
		return fmt.Errorf("read read-only after the start: %w", err)
	case !fenced:
		return fmt.Errorf("%w after the start", ErrSalvageTargetWritable)
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
