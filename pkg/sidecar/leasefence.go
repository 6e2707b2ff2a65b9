package sidecar

import (
	"context"
	"time"
)

// The lease fence (pkg/mysql ArmLeaseFence) is mysqld's own copy of the
// lease: an event in mysqld that fences it when the lease runs out, unless
// the sidecar pushes it later first. The sidecar fences at its lease's end
// by itself; the event is for when the sidecar cannot, because it is
// paused while mysqld runs on. Without it, a primary cut off from the
// operator whose sidecar is paused writes on after the operator promotes
// another site at the lease deadline.
//
// The sidecar arms it on every tick that sees mysqld writable under a view
// naming its own site. mysqld counts the event's time in whole seconds
// from the second the statement runs in, so an event armed for n seconds
// fires between n-1 and n seconds later (and its scheduler may add up to
// about a second). The operator promotes another site no sooner than its
// lease deadline, a peerCheckInterval after the sidecar's own. So the event
// is armed for what is left of the lease, plus a peerCheckInterval, less a
// second for the scheduler and less the time the statement may take: it
// fires before the operator's deadline, and with a peerCheckInterval of 2 s
// or more, not before the sidecar's own lease fence would have. Less than
// two seconds is not armed (it could fire at once). A wall-clock step of
// mysqld's host moves the event by as much; only a step back while the
// sidecar is paused and the site cut off weakens it.
//
// The time between the operator making a site writable and that site's
// sidecar's next tick is covered by the operator: it arms the event itself
// before it makes a site writable, counted from the sidecar's last ask
// (pkg/failover ArmLeaseFence, pkg/topology WritableLeaseFence), with the
// same margins.

// leaseFencer is the part of pkg/mysql's Instance that arms the lease fence.
type leaseFencer interface {
	ArmLeaseFence(ctx context.Context, after time.Duration) error
}

// minLeaseFence is the least time the lease fence is armed for: armed for
// less, it could fire within a second of the arm.
const minLeaseFence = 2 * time.Second

// A timed-out arm that mysqld still runs later sets the event later by
// as much; a failed arm leaves the earlier, sooner time in place.

// schedulerSlack is how late mysqld's event scheduler may run an event.
const schedulerSlack = time.Second

// LeaseFence says whether to arm mysqld's lease fence at now, and for how
// long: only while mysqld may write (writable, or unknown: a read that
// timed out must not let an earlier arm fire on a primary whose lease is
// renewed) under a view naming this site and the rule calls for no fence; for the lease left, plus a
// peerCheckInterval, less schedulerSlack and margin (how long the arming
// statement may take), when that is at least minLeaseFence.
func (l *Loop) LeaseFence(now time.Time, db DBState, margin time.Duration) (time.Duration, bool) {
	if !db.mayWrite() || !l.hasView || l.view.ActiveSite != l.s.Site {
		return 0, false
	}
	if fence, _ := l.rule(now, db); fence {
		return 0, false
	}
	after := l.LeaseRemaining(now) + l.s.PeerCheckInterval - schedulerSlack - margin
	if after < minLeaseFence {
		return 0, false
	}
	return after, true
}

// armLeaseFence pushes mysqld's lease fence to the lease's end when the
// Loop says so. A failure is counted and logged when it starts and when it
// ends; it changes nothing else (the sidecar's own fence still holds).
func (r *Runner) armLeaseFence(ctx context.Context, db DBState) {
	lf, ok := r.db.(leaseFencer)
	if !ok {
		return
	}
	// The first arm makes the schema and the event, and turns the
	// scheduler on: give it a second at least.
	margin := max(r.cfg.StatusTimeout, time.Second)
	r.mu.Lock()
	left, arm := r.loop.LeaseFence(r.cfg.Clock.Now(), db, margin)
	r.mu.Unlock()
	if !arm {
		return
	}
	actx, cancel := context.WithTimeout(ctx, margin)
	defer cancel()
	err := lf.ArmLeaseFence(actx, left)
	r.mu.Lock()
	was := r.st.leaseFenceErr
	r.st.leaseFenceErr = err
	r.mu.Unlock()
	if err != nil {
		r.metrics.leaseFenceArms.WithLabelValues(ResultFailed).Inc()
		if was == nil {
			r.log.Error("cannot arm mysqld's lease fence", "site", r.cfg.Site, "error", err)
		}
		return
	}
	r.metrics.leaseFenceArms.WithLabelValues(ResultOK).Inc()
	if was != nil {
		r.log.Info("mysqld's lease fence armed again", "site", r.cfg.Site)
	}
}
