package grouploop

import (
	"context"
	"errors"

	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// proveLeaseFences proves, before the pass acts, the lease fence of every
// site whose status marks it unproven (failover.ArmLeaseFence): a step
// made it writable while a global read lock refused the arm, or the
// operator died between its claim and the end of its pass. Until then the
// site's lease deadline confirms nothing (topology.LeaseDeadline), so a
// failover away from it waits for other evidence.
//
// A site this pass's probe saw read-only needs no event: the probe was
// taken after the claim that set the mark (an earlier pass's), and any
// later step that makes it writable claims it again. A site seen writable
// gets its lease fence armed as a writable step's is
// (topology.WritableLeaseFence, from its sidecar's last ask); the mark
// stays while the arm fails, is refused, or is held off by a write hold
// (no write commits under the hold; the next pass tries again).
func (l *Loop) proveLeaseFences(ctx context.Context, p failover.Pass) {
	st := &p.Group.Status
	for _, s := range p.Group.Spec.Sites {
		if !failover.LeaseFenceUnproven(st, s.Name) {
			continue
		}
		o, seen := l.obs[s.Name]
		if !seen || o.err != nil {
			continue
		}
		if !o.status.Writable() {
			if failover.MaybeWritable(st, s.Name) {
				continue // the claim's statement may land after this probe
			}
			failover.ProveLeaseFence(st, s.Name)
			continue
		}
		if l.armUnproven(ctx, p, s.Name) {
			failover.ProveLeaseFence(st, s.Name)
		}
	}
}

// armUnproven arms site's lease fence for its sidecar's last ask, and
// reports whether that proves it: armed, or the group has none to arm.
func (l *Loop) armUnproven(ctx context.Context, p failover.Pass, site string) bool {
	d := topology.WritableLeaseFence(topology.LeaseFenceArm{Site: site, Now: l.env.Clock.Now(),
		SidecarAskedAt: l.sidecarAskedAt(site), LeaseTimeout: p.Settings.LeaseTimeout,
		PeerCheckInterval: p.Settings.PeerCheckInterval, Margin: p.Settings.LeaseFenceTimeout})
	switch {
	case d.Refused != "":
		l.log.V(1).Info("lease fence stays unproven", "site", site, "reason", d.Refused)
		return false
	case d.After <= 0:
		return true // no lease fence in this group: its deadline never counted on one
	}
	cctx, cancel := context.WithTimeout(ctx, p.Settings.LeaseFenceTimeout)
	defer cancel()
	err := l.conns.ArmLeaseFence(cctx, site, d.After)
	if err != nil && !errors.Is(err, failover.ErrWritesHeld) {
		l.log.Error(err, "arm the lease fence of a site made writable without one", "site", site)
	}
	return err == nil
}

// releaseArms is how many times proveAfterRelease arms: each arm waits
// out its lock wait (a second) under a write hold.
const releaseArms = 2

// proveAfterRelease proves, in the pass that made site writable, a lease
// fence whose arm a write hold refused: the promotion nudged the site's
// sidecar, which lets go of its hold on the tick that follows, within
// moments, and the arm waiting on the hold then runs. Proven here, a site
// cut off right after its re-assert is failed over from at its lease
// deadline; left to the next pass, it would wait until it answers.
func (l *Loop) proveAfterRelease(ctx context.Context, p failover.Pass, site string) {
	st := &p.Group.Status
	for range releaseArms {
		if !failover.LeaseFenceUnproven(st, site) || ctx.Err() != nil {
			return
		}
		if l.armUnproven(ctx, p, site) {
			failover.ProveLeaseFence(st, site)
		}
	}
}
