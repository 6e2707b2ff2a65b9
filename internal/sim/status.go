package sim

import (
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Status is the operator's persisted state as the checker and the scripts
// read it: MysqlFailoverGroup.status (plus the annotations an administrator
// sets), projected from the sim's API server (realop_status.go).
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

	// PromotionExecuted is the active site's executed set when it was promoted.
	PromotionExecuted gtid.Set

	Sites []SiteRecord // spec order
}

// SiteRecord is the persisted part of one site's status.
type SiteRecord struct {
	Name string
	// MayBeWritable is set before the operator unfences the site, and cleared
	// once the site is confirmed unable to write.
	MayBeWritable bool
	// Divergent holds the errant transactions found on the site; non-empty
	// means it never rejoins until recloned.
	Divergent gtid.Set
	// AdminFenced is the administrator's fence annotation.
	AdminFenced bool
}

// Intent is an emergency failover in flight.
type Intent struct {
	From, To    string
	Generation  int64
	Step        v1alpha1.FailoverStep
	StartedAt   time.Time
	ConfirmedBy string
}

// PlannedState is a planned failover's persisted status block.
type PlannedState struct {
	Phase          v1alpha1.PlannedFailoverPhase
	Target, Source string
	Reason         string
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
