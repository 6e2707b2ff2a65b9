package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Every step that makes a site writable (an emergency or planned
// promotion, a re-assertion, a rollback's unfence) goes through
// PrepareWritable right before the statement that lifts the barrier: it
// arms the site's lease fence (leasefence.go), then, with semi-sync on,
// makes the site the semi-sync source with the part topology.PlanSemiSync
// gives the active site. The first commit the site accepts then already
// waits for a replica's acknowledgement; set a pass later, the commits in
// between would be acknowledged to clients with no replica holding them.
//
// If the source cannot be set: with dataDurability required the site is
// not made writable (the step fails, as on a failed lease-fence arm, and
// the next pass tries again); with preferred it is made writable all the
// same, with a Warning, since preferred accepts asynchronous commits
// whenever no replica acknowledges. Both record a SemiSyncNotSet Event;
// under required it names the way out (dataDurability: preferred, or the
// plugins loaded), since a server without semi-sync would otherwise keep
// every promotion and re-assert waiting without saying how to end it.
//
// A promotion's target gets its source part with its replication stopped
// first (SemiSyncRole.Promoting): no relay-log transaction its applier
// commits can then wait for an acknowledgement, and its IO thread is not
// restarted toward the old primary, which may be unreachable, right
// before Promote forgets it.
//
// The sites a failover repoints at the new primary get their replica part
// first (PrepareReplica), so that they acknowledge as soon as their IO
// thread connects: under required, the new primary's first commits wait
// for them and not for the next pass's keepSemiSync. A failure there is
// left to that pass.

// PrepareWritable readies site for the step about to make it writable:
// its lease fence armed (ArmLeaseFence), then its semi-sync source part
// set (p.SemiSync). An error means the step must not run.
func PrepareWritable(ctx context.Context, p Pass, db DB, n Notifier, now time.Time, site string) error {
	if err := ArmLeaseFence(ctx, p, db, n, now, site); err != nil {
		return err
	}
	ss := p.SemiSync
	if ss == nil || !ss.Enabled {
		return nil
	}
	role := topology.SemiSyncRoleWith(*ss, site, site)
	role.Promoting = true
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	err := db.ConfigureSemiSync(cctx, role)
	cancel()
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%w on %s: %w", ErrSemiSync, site, err)
	if ss.Required {
		n.Event(p.Group, EventWarning, v1alpha1.EventSemiSyncNotSet,
			fmt.Sprintf("%s is not made writable (dataDurability required): %v; every promotion and re-assert waits "+
				"until its semi-sync source can be set: if the server has no semi-sync (MySQL without the semisync "+
				"plugins), set spec.mysql.semiSync.dataDurability: preferred or load the plugins", site, err))
		return err
	}
	n.Event(p.Group, EventWarning, v1alpha1.EventSemiSyncNotSet,
		fmt.Sprintf("%s is made writable without waiting for replicas (dataDurability preferred): %v", site, err))
	return nil
}

// PrepareReplica gives site, about to be pointed at source, its semi-sync
// part under source (p.SemiSync), so that it acknowledges from its first
// connection. Best effort: the poll loop's next pass sets it again.
func PrepareReplica(ctx context.Context, p Pass, db DB, site, source string) {
	role := replicaPart(p, site, source)
	if role == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.CallTimeout)
	_ = db.ConfigureSemiSync(cctx, *role)
	cancel()
}

// replicaPart is site's semi-sync part under source; nil with semi-sync
// off.
func replicaPart(p Pass, site, source string) *topology.SemiSyncRole {
	ss := p.SemiSync
	if ss == nil || !ss.Enabled {
		return nil
	}
	role := topology.SemiSyncRoleWith(*ss, source, site)
	return &role
}

// PromoteOpts is what Promote sets again under site's topology lock: the
// source part PrepareWritable gave it. Between the two, a deposed
// leader's salvage into site may have taken the lock and given it the
// replica part (its checks pass on a site still read-only); without this
// the new primary's first commits would not wait for an acknowledgement.
// Best effort under preferred, as in PrepareWritable.
func PromoteOpts(p Pass, site string) PromoteOptions {
	ss := p.SemiSync
	if ss == nil || !ss.Enabled {
		return PromoteOptions{}
	}
	role := topology.SemiSyncRoleWith(*ss, site, site)
	role.Promoting = true
	return PromoteOptions{SemiSync: &role, SemiSyncBestEffort: !ss.Required}
}
