package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Every step that makes a site writable (an emergency or planned
// promotion, a re-assertion, a rollback's unfence) first arms that site's
// mysqld's lease fence itself, right before the statement that lifts the
// barrier: the event that fences mysqld once the site's lease has run out
// (pkg/mysql ArmLeaseFence). The site's sidecar pushes the event later on
// every tick while its mysqld is writable, but a sidecar that asked the
// operator and then paused never arms it: made writable and cut off next,
// its site would write on after the operator promotes another site at the
// lease deadline. The operator's arm counts from that sidecar's last ask
// (topology.WritableLeaseFence), so it fires before that deadline. A step
// whose arm fails or is refused does not make the site writable.
//
// One failure lets the step go on: the arm waited out its lock wait (a
// second) on a global read lock, the write hold a live sidecar keeps on a
// fenced site that does not replicate (the event's DDL waits for it, the
// statements that lift the barrier do not). While the hold stays, no write
// commits; the sidecar lets go on its next tick, once it sees the site
// writable, and arms the event itself in that tick. A sidecar paused while
// it holds keeps every write waiting. pkg/mysql proves the hold before it
// says ErrWritesHeld (a write that changes nothing waits too): a backup's
// lock, which stops the DDL and not the writes, is a failed arm.
//
// But a freeze of mysqld in the very tick the sidecar lets go splits its
// release from its arm; if the sidecar then pauses and the site is cut off
// from the operator, mysqld thaws writable with no event, and a promotion
// at the lease deadline would make two writers (internal/sim script
// realop_thaw_after_held_reassert). So a refused arm leaves the site's
// lease fence unproven (set by the claim, claim.go): its lease deadline
// confirms nothing until an arm succeeds, here or on a later pass of the
// poll loop while the site is reachable, or the site is seen read-only.
// A successful arm proves it; so does a group with no lease fence to arm,
// whose lease deadline never counted on one.

// ArmLeaseFence arms site's lease fence for the step about to make it
// writable, or says why not (an error wrapping ErrLeaseFence, recorded in
// a Warning Event). p.SidecarAskedAt nil: the caller knows no sidecars,
// and nothing is armed; nor for a group whose lease is too short for any
// lease fence (topology.WritableLeaseFence).
func ArmLeaseFence(ctx context.Context, p Pass, db DB, n Notifier, now time.Time, site string) error {
	if p.SidecarAskedAt == nil {
		markLeaseFence(&p.Group.Status, site, false)
		return nil
	}
	d := topology.WritableLeaseFence(topology.LeaseFenceArm{Site: site, Now: now,
		SidecarAskedAt: p.SidecarAskedAt(site), LeaseTimeout: p.Settings.LeaseTimeout,
		PeerCheckInterval: p.Settings.PeerCheckInterval, Margin: p.Settings.LeaseFenceTimeout})
	var err error
	switch {
	case d.Refused != "":
		err = fmt.Errorf("%w on %s: %s", ErrLeaseFence, site, d.Refused)
	case d.After > 0:
		cctx, cancel := context.WithTimeout(ctx, p.Settings.LeaseFenceTimeout)
		err = db.ArmLeaseFence(cctx, site, d.After)
		cancel()
		if errors.Is(err, ErrWritesHeld) {
			// The hold guards it; its sidecar arms as it lets go. Until an
			// arm is proven, the lease deadline counts for nothing.
			markLeaseFence(&p.Group.Status, site, true)
			return nil
		}
		if err != nil {
			err = fmt.Errorf("%w on %s for %s: %w", ErrLeaseFence, site, d.After, err)
		}
	}
	if err != nil {
		n.Event(p.Group, EventWarning, v1alpha1.EventLeaseFenceNotArmed,
			fmt.Sprintf("%s is not made writable: %v", site, err))
		return err
	}
	markLeaseFence(&p.Group.Status, site, false) // armed, or no lease fence in this group
	return nil
}

// markLeaseFence records whether site's lease fence is unproven; clearing
// never adds a record.
func markLeaseFence(st *v1alpha1.MysqlFailoverGroupStatus, site string, unproven bool) {
	if unproven {
		SiteRecord(st, site).LeaseFenceUnproven = true
		return
	}
	for i := range st.Sites {
		if st.Sites[i].Name == site {
			st.Sites[i].LeaseFenceUnproven = false
		}
	}
}

// LeaseFenceUnproven reports whether status records site's lease fence as
// unproven (claim.go).
func LeaseFenceUnproven(st *v1alpha1.MysqlFailoverGroupStatus, site string) bool {
	return SiteStatusOf(st, site).LeaseFenceUnproven
}

// ProveLeaseFence records that site's lease fence no longer needs proving:
// an arm succeeded, or the site was seen read-only after the claim.
func ProveLeaseFence(st *v1alpha1.MysqlFailoverGroupStatus, site string) {
	markLeaseFence(st, site, false)
}
