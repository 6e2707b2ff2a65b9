package failover

import (
	"context"
	"slices"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Pass is one poll pass as the sequence sees it. The caller builds Input from
// its fresh observations and persisted status, and Decision with topology.Decide.
type Pass struct {
	// Group is the group as last read; the sequence mutates Group.Status and
	// persists it through Env.Persister.
	Group    *v1alpha1.MysqlFailoverGroup
	Input    topology.Input
	Decision topology.Decision
	// Evidence returns what the operator knows about whether site can write.
	Evidence func(site string) topology.Evidence
	// Sidecar returns the generation the site's sidecar was last seen holding,
	// and whether that sidecar is live (reported within its lease). A live
	// sidecar that does not hold the generation naming its site would fence
	// it right after promotion.
	Sidecar func(site string) (generation int64, live bool)
	// SidecarAskedAt returns when site's sidecar last asked this operator
	// for the view (zero: unknown, or possibly another Pod's sidecar); the
	// lease fence armed before a step that makes site writable counts from
	// it (ArmLeaseFence). Nil: the caller knows no sidecars, and nothing is
	// armed.
	SidecarAskedAt func(site string) time.Time
	// SemiSync is the group's semi-sync settings and this pass's view of
	// the sites (topology.SemiSyncInput), from which a site made writable
	// or repointed gets its part (PrepareWritable, PrepareReplica). Nil or
	// not Enabled: no semi-sync setting is touched.
	SemiSync *topology.SemiSyncInput
	Settings Settings
	// MayMakeWritable, when set, is asked right before every step that makes
	// a site writable (a promotion, a rollback's unfence); an error (wrapping
	// ErrMayNotMakeWritable) means not on this pass: the step waits for the
	// next pass, which observes again. pkg/controller's checks the snapshot's
	// age (topology.MayMakeWritable) and that the operator still leads.
	// fresh, when not zero, is when the step began a read of its own of
	// what it decides on (a planned promotion reads the target's GTIDs just
	// before): the snapshot counts as taken then. site is the site the step
	// makes writable: its sidecar must be asking the operator.
	MayMakeWritable func(ctx context.Context, site string, fresh time.Time) error
}

// gate asks MayMakeWritable, when set, about making site writable on the
// pass's snapshot.
func (p Pass) gate(ctx context.Context, site string) error {
	return p.gateFresh(ctx, site, time.Time{})
}

// gateFresh asks MayMakeWritable about a step that makes site writable
// and re-read what it decides on from fresh on.
func (p Pass) gateFresh(ctx context.Context, site string, fresh time.Time) error {
	if p.MayMakeWritable == nil {
		return nil
	}
	return p.MayMakeWritable(ctx, site, fresh)
}

// PlannedInFlight reports whether a planned failover holds the topology:
// its status block is in a phase PlannedHolds names (Draining through
// Resuming). Automatic evaluation pauses then. A Deferred request holds
// nothing: an emergency while it waits is handled as usual.
func PlannedInFlight(st *v1alpha1.MysqlFailoverGroupStatus) bool {
	return st.PlannedFailover != nil && PlannedHolds(st.PlannedFailover.Phase)
}

// InFlight is status.failover as topology.Decide reads it.
func InFlight(st *v1alpha1.MysqlFailoverGroupStatus) *topology.Intent {
	if st.Failover == nil {
		return nil
	}
	return &topology.Intent{From: st.Failover.From, To: st.Failover.To, Generation: st.Failover.Generation,
		Step: st.Failover.Step, Abandoned: slices.Clone(st.Failover.Abandoned), AbandonedWrote: abandonedWrote(st.Failover)}
}

// SiteRecord returns the status record of site, adding one when missing.
func SiteRecord(st *v1alpha1.MysqlFailoverGroupStatus, site string) *v1alpha1.SiteStatus {
	for i := range st.Sites {
		if st.Sites[i].Name == site {
			return &st.Sites[i]
		}
	}
	st.Sites = append(st.Sites, v1alpha1.SiteStatus{Name: site})
	return &st.Sites[len(st.Sites)-1]
}

// SiteStatusOf is a copy of site's record in st, the zero record when st has
// none; unlike SiteRecord it never adds one.
func SiteStatusOf(st *v1alpha1.MysqlFailoverGroupStatus, site string) v1alpha1.SiteStatus {
	for _, s := range st.Sites {
		if s.Name == site {
			return s
		}
	}
	return v1alpha1.SiteStatus{}
}

// HeldReadOnly reports whether Bloodraven holds site read-only: it was last
// observed read-only (or fenced by SQL) and has not been made writable since.
// Such a site is confirmed unable to write even while unreachable, because
// only the operator ever unfences. A site that may have been made writable
// since (MaybeWritable) is not held read-only, whatever its mark.
func HeldReadOnly(st *v1alpha1.MysqlFailoverGroupStatus, site string) bool {
	for _, s := range st.Sites {
		if s.Name == site {
			return s.Fenced && !s.MaybeWritable
		}
	}
	return false
}

// abandonedWrote is the intent's abandonedGtidSet; one that does not parse
// counts as empty (nothing is exempt for it).
func abandonedWrote(it *v1alpha1.FailoverIntent) gtid.Set {
	set, _ := gtid.ParseSet(it.AbandonedGtidSet)
	return set
}
