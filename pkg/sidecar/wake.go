package sidecar

import (
	"context"
	"time"
)

// A sidecar can wake after a long stop: its container or its whole node was
// frozen (SIGSTOP, a paused VM, a stalled cgroup) while its lease ran out and
// another site was promoted. mysqld thaws with it, and pooled client
// connections write again at once. Reading mysqld and gathering views take
// up to StatusTimeout plus RequestTimeout, so a wake-up that first reads and
// then decides leaves a window of seconds in which this site is a second
// writer. enforceWake closes it: every wake-up (a periodic or refresh tick,
// the lease timer) first applies the rule to the mysqld state last seen, and
// fences before anything else when that says so.
//
// Elapsed time is measured on the monotonic clock: time.Now carries a
// monotonic reading, Loop compares the times it is given with Sub and
// After, and nothing in this package strips the reading (Round, Truncate,
// UTC, or a round trip through text) before a comparison. A wall-clock step
// therefore neither shortens nor lengthens the lease.

// enforceWake applies the rule at now to the mysqld state last seen, before
// the caller reads mysqld or asks anyone anything, and fences when it says
// so. It reports whether it fenced.
//
// The boot reason is left to the caller's own read when the last state is
// unknown (no read yet, or the last one failed), so a replica's read-only
// clients are not killed for nothing, unless the active record says the
// operator may have made mysqld writable (mayactive.go).
// A state last seen down is also left to the read, and so is one last seen
// read-only, unless the view held names this site active and the lease ran
// out: the sidecar never unfences, but the operator, having heard this
// sidecar adopt the view naming it, may have made mysqld writable after
// the last read and before the freeze (a promotion that lands just then:
// simulation seed 9569), and nothing else would stop its clients' first
// writes. That fence is made once after the lease ran out (none since its
// deadline), not on every tick of a site cut off for long.
func (r *Runner) enforceWake(ctx context.Context, now time.Time) bool {
	r.mu.Lock()
	last, mayActive := r.st.db, r.bootActive
	d := r.loop.Check(now, last)
	v, held := r.loop.View()
	if deadline := r.loop.LeaseDeadline(); !d.Fence && last == DBReadOnly && held && v.ActiveSite == r.cfg.Site &&
		!now.Before(deadline) && r.st.lastFence.Before(deadline) {
		d = Decision{Fence: true, Reason: ReasonLease}
	}
	r.mu.Unlock()
	if !d.Fence || (d.Reason == ReasonBoot && last == DBUnknown && !mayActive) {
		return false
	}
	r.log.Warn("fencing before anything else on wake-up", "reason", d.Reason, "lastSeen", last.String())
	_ = r.fence(ctx, d.Reason)
	return true
}

// armLeaseWatch fences at the lease deadline when that falls inside the
// tick that began at start: a tick can spend StatusTimeout reading mysqld
// and RequestTimeout on a hung request, and a lease fence that waited for
// the gather to end could start after the operator's lease deadline, with no
// budget left to escalate. The returned func disarms it.
func (r *Runner) armLeaseWatch(ctx context.Context, start time.Time) func() {
	lease := r.leaseDeadline()
	if !lease.After(start) {
		return func() {}
	}
	t := r.cfg.Clock.AfterFunc(lease.Sub(start), func() {
		now := r.cfg.Clock.Now()
		r.mu.Lock()
		d := r.loop.Check(now, r.st.db)
		r.mu.Unlock()
		if d.Fence && d.Reason == ReasonLease {
			r.log.Warn("lease ran out during the tick; fencing without waiting for it", "reason", d.Reason)
			_ = r.fence(ctx, d.Reason)
		}
	})
	return func() { t.Stop() }
}

// fencedSince tells whether a fence held since t left mysqld read-only, so
// that a tick does not fence again what its lease watch already fenced.
func (r *Runner) fencedSince(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.db == DBReadOnly && !r.st.lastFence.Before(t)
}

// bootFenceFirst fences, before the tick gathers anything, a mysqld read
// writable (or unreadable) while the boot rule holds and the active record
// is set: the boot check's own fence failed (a frozen mysqld), and a
// gather can take RequestTimeout while pooled clients write to a mysqld
// that thawed during the read. It reports whether it fenced.
func (r *Runner) bootFenceFirst(ctx context.Context, start time.Time, db DBState) bool {
	r.mu.Lock()
	d := r.loop.Check(start, db)
	mayActive := r.bootActive
	r.mu.Unlock()
	if !d.Fence || d.Reason != ReasonBoot || !mayActive {
		return false
	}
	r.log.Warn("fencing before gathering: booted with the active record set", "lastSeen", db.String())
	return r.fence(ctx, d.Reason) == nil
}
