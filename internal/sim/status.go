package sim

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Status is the operator's persisted state, the sim's stand-in for
// MysqlFailoverGroup.status (plus the annotations an administrator sets). It
// survives operator restarts; every change a sequencer makes to it counts as
// persisted before the sequencer's next call to SiteOps.
type Status struct {
	ActiveSite string
	Generation int64
	History    []topology.FailoverRecord

	// Intent is the emergency failover in flight, nil when none.
	Intent *Intent
	// Planned is the latest planned failover, nil when none ever ran.
	Planned *PlannedState
	// PlannedRequest is the planned-failover annotation: a site name, or "".
	PlannedRequest string

	// PromotionExecuted is the active site's executed set when it was promoted,
	// and ActiveSourceID its server's source id: together they bound what any
	// site may hold without having diverged, while the active site is unreachable.
	PromotionExecuted gtid.Set
	ActiveSourceID    string

	Sites []SiteRecord // spec order
}

// SiteRecord is the persisted part of one site's status.
type SiteRecord struct {
	Name string
	// MayBeWritable is set before the operator unfences the site, and cleared
	// once the site is confirmed unable to write.
	MayBeWritable bool
	UnfencedAt    time.Time
	// Divergent holds the errant transactions found on the site; non-empty
	// means it never rejoins until recloned.
	Divergent gtid.Set
	// AdminFenced is the administrator's fence annotation.
	AdminFenced bool
}

// Intent is an emergency failover in flight.
type Intent struct {
	From, To       string
	Generation     int64
	Step           v1alpha1.FailoverStep
	StartedAt      time.Time
	StepAt         time.Time
	SourceExecuted gtid.Set // the old primary's last observed executed set
	ConfirmedBy    string
}

// PlannedState is a planned failover's persisted status block.
type PlannedState struct {
	Phase          v1alpha1.PlannedFailoverPhase
	Target, Source string
	Generation     int64 // the generation published at Promoting, 0 before
	SourceAtFence  gtid.Set
	StartedAt      time.Time
	PhaseAt        time.Time
	Reason         string
}

// Guard reports whether the planned failover holds the topology.
func (p *PlannedState) Guard() bool {
	if p == nil {
		return false
	}
	switch p.Phase {
	case v1alpha1.PhaseDraining, v1alpha1.PhaseWaitingForLag, v1alpha1.PhasePromoting, v1alpha1.PhaseResuming:
		return true
	}
	return false
}

// Site returns the named site's record.
func (s *Status) Site(name string) *SiteRecord {
	for i := range s.Sites {
		if s.Sites[i].Name == name {
			return &s.Sites[i]
		}
	}
	return nil
}

// publish persists a new generation naming active.
func (s *Status) publish(active string) int64 {
	s.Generation++
	s.ActiveSite = active
	return s.Generation
}
