package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
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
// step, the planned failover's phase, or the last failover. Writing on top
// would undo that writer's step, so the write is abandoned instead.
func authorityMoved(base, fresh *v1alpha1.MysqlFailoverGroupStatus) bool {
	return base.TopologyGeneration != fresh.TopologyGeneration || base.ActiveSite != fresh.ActiveSite ||
		!equality.Semantic.DeepEqual(base.Failover, fresh.Failover) ||
		plannedPhase(base) != plannedPhase(fresh) ||
		!equality.Semantic.DeepEqual(base.LastFailover, fresh.LastFailover)
}

func plannedPhase(st *v1alpha1.MysqlFailoverGroupStatus) v1alpha1.PlannedFailoverPhase {
	if st.PlannedFailover == nil {
		return ""
	}
	return st.PlannedFailover.Phase
}
