package grouploop

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// guard refuses a write after the pass found the authority moved, and a
// write that would lower the generation this pass based its change on.
func (p *statusPatcher) guard(g *v1alpha1.MysqlFailoverGroup) error {
	if p.abandoned {
		return fmt.Errorf("status of %s/%s: an earlier write of this pass was abandoned: %w",
			g.Namespace, g.Name, ErrAuthorityMoved)
	}
	if p.base != nil && g.Status.TopologyGeneration < p.base.Status.TopologyGeneration {
		return fmt.Errorf("status of %s/%s: generation %d below %d: %w", g.Namespace, g.Name,
			g.Status.TopologyGeneration, p.base.Status.TopologyGeneration, ErrAuthorityMoved)
	}
	return nil
}

// authorityMoved reports whether the status another writer left (fresh)
// changed the authority this writer based its change on (base): the
// generation, the active site, the emergency failover in flight or its
// step, the planned failover's phase, the last failover, a site newly
// marked maybe-writable (another process's claim before it makes the site
// writable, failover/claim.go) or newly marked diverged. Writing on top
// would undo that writer's step, or erase a mark that keeps a site from
// writing (fence it first; never promote or rejoin it), so the write is
// abandoned instead.
func authorityMoved(base, fresh *v1alpha1.MysqlFailoverGroupStatus) bool {
	return base.TopologyGeneration != fresh.TopologyGeneration || base.ActiveSite != fresh.ActiveSite ||
		!equality.Semantic.DeepEqual(base.Failover, fresh.Failover) ||
		plannedPhase(base) != plannedPhase(fresh) ||
		!equality.Semantic.DeepEqual(base.LastFailover, fresh.LastFailover) ||
		newlyMarked(base, fresh, func(s v1alpha1.SiteStatus) bool { return s.MaybeWritable }) ||
		newlyMarked(base, fresh, func(s v1alpha1.SiteStatus) bool { return s.LeaseFenceUnproven }) ||
		newlyMarked(base, fresh, func(s v1alpha1.SiteStatus) bool { return s.DivergentGtid != "" })
}

// clearsLeaseFenceMark reports whether want, written over fresh, would
// clear a site's lease-fence mark that fresh holds. Another process may
// have claimed the site again since this pass proved the fence (by a probe
// or an arm of its own): a mark already set is never newly set, so
// authorityMoved cannot tell, and the proof may be stale. Such a write is
// abandoned; the next pass proves the fence again if it still can.
func clearsLeaseFenceMark(want, fresh *v1alpha1.MysqlFailoverGroupStatus) bool {
	for _, s := range fresh.Sites {
		if s.LeaseFenceUnproven && !failover.LeaseFenceUnproven(want, s.Name) {
			return true
		}
	}
	return false
}

// newlyMarked reports whether fresh marks a site (mark) that base does not.
func newlyMarked(base, fresh *v1alpha1.MysqlFailoverGroupStatus, mark func(v1alpha1.SiteStatus) bool) bool {
	for _, s := range fresh.Sites {
		if mark(s) && !mark(failover.SiteStatusOf(base, s.Name)) {
			return true
		}
	}
	return false
}

func plannedPhase(st *v1alpha1.MysqlFailoverGroupStatus) v1alpha1.PlannedFailoverPhase {
	if st.PlannedFailover == nil {
		return ""
	}
	return st.PlannedFailover.Phase
}

// PersistStatusExclusive writes g.Status with the optimistic lock on the
// base, the status this pass read or last wrote itself, and nothing else:
// it refuses when a write of this pass already wrote over another writer's
// change (foreign), and a conflict abandons the pass (ErrAuthorityMoved)
// instead of re-reading. It writes even when nothing changed: a patch that
// carries only the resourceVersion still fails on a newer object. It
// implements failover.Persister's claim before a site is made writable.
func (p *statusPatcher) PersistStatusExclusive(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	if err := p.guard(g); err != nil {
		return err
	}
	if p.base == nil || p.foreign {
		return fmt.Errorf("status of %s/%s: another writer changed it during this pass: %w",
			g.Namespace, g.Name, ErrAuthorityMoved)
	}
	patch := client.MergeFromWithOptions(p.base, client.MergeFromWithOptimisticLock{})
	err := p.c.Status().Patch(ctx, g, patch)
	switch {
	case err == nil:
		p.base = g.DeepCopy()
		return nil
	case apierrors.IsConflict(err):
		p.abandoned = true
		return fmt.Errorf("patch status of %s/%s: another writer changed it since this pass read it: %w",
			g.Namespace, g.Name, ErrAuthorityMoved)
	}
	return fmt.Errorf("patch status of %s/%s: %w", g.Namespace, g.Name, err)
}
