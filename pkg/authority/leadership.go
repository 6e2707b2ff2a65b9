package authority

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
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
