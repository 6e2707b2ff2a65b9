package failover

import (
	"context"
	"fmt"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// rollbackNamed rolls back a request whose target was already named active
// but never made writable, because it no longer holds the fenced source's
// set (promoting it would lose acknowledged writes), or became unfit
// (diverged, fenced by an administrator, holding transactions the source
// never had). reason is the block's and the ending's reason. In order, each step
// persisted before the next:
//  1. the target is fenced by SQL, so that a promotion that may have taken
//     effect unseen cannot leave it writable;
//  2. a new generation names the source active again, with the reason
//     recorded in the block (a restarted operator resumes here), and is
//     published;
//  3. the source's sidecar gets AdoptionWait to hold that generation, or it
//     would fence the source right back;
//  4. rollback unfences the source, restores its role labels and ends the
//     request Failed. DNS never moved.
func (m *Planned) rollbackNamed(ctx context.Context, p Pass, b *v1alpha1.PlannedFailoverStatus, reason, why string) (PlannedOutcome, error) {
	st, src := &p.Group.Status, b.SourcePrimary
	if st.ActiveSite == b.Target && b.Target != src {
		cctx, cancel := m.call(ctx, p)
		err := m.env.DB.Fence(cctx, b.Target)
		cancel()
		if err != nil {
			return waiting(retryPause, "fencing "+b.Target+" before rolling back"),
				fmt.Errorf("planned failover: roll back: fence %s: %w", b.Target, err)
		}
		SiteRecord(st, b.Target).Fenced = true
		st.TopologyGeneration++
		st.ActiveSite = src
		m.enter(b, b.Phase, why)
		b.Reason = reason
		if err := m.persist(ctx, p); err != nil {
			return waiting(retryPause, "naming "+src+" active again"), err
		}
		m.env.Publisher.Publish(p.Group)
	}
	if p.Sidecar != nil && m.inPhase(b) < p.Settings.AdoptionWait {
		if gen, live := p.Sidecar(src); live && gen < st.TopologyGeneration {
			return waiting(adoptionPoll, fmt.Sprintf("%s's sidecar holds generation %d, waiting for %d", src, gen,
				st.TopologyGeneration)), nil
		}
	}
	return m.rollback(ctx, p, b, ending{phase: v1alpha1.PhaseFailed, reason: reason,
		msg:    fmt.Sprintf("%s; generation %d names %s active again", b.Message, st.TopologyGeneration, src),
		result: PlannedResultFailedOther, event: v1alpha1.EventPlannedFailoverFailed})
}
