package topology

import (
	"fmt"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Replication is a replica's replication health as its last probe showed it.
type Replication struct {
	// Running is true when both replication threads run (IO connected, SQL applying).
	Running bool
	// Error is the last IO or SQL thread error, empty when none.
	Error string
	// Lag is how far the replica is behind its source (Seconds_Behind_Source).
	Lag time.Duration
	// SQLError is true when the SQL (applier) thread stopped on an error.
	SQLError bool
	// Retrieved is what the IO thread received: MySQL's Retrieved_Gtid_Set,
	// or MariaDB's Gtid_IO_Pos as a set. Empty when nothing was received.
	Retrieved gtid.Set
	// RetrievedUnknown is true when Retrieved could not be read; a site whose
	// SQL thread failed then does not count as having applied its relay log.
	RetrievedUnknown bool
	// ReceivedLost is true when the relay log that held Retrieved is known
	// gone: a drain of this site ended short of it (DrainedShort; its mysqld
	// restarted or its relay log was reset since the read), and it has
	// received nothing since. What it received then does not count as held
	// (Holdings).
	ReceivedLost bool
	// Started is when the site's mysqld started, as the probe that read
	// Retrieved showed it (the probe's time less its Uptime); zero when
	// unknown. A drain's read that shows a later start means mysqld
	// restarted since, and the relay log the site was ranked on may be
	// gone with it (JudgeDrain).
	Started time.Time
	// SemiSyncAcking is true when the site is a semi-sync replica of the
	// active site: its replica part is on and its IO thread runs, or
	// retries, against the active site. It acknowledged what it received,
	// so among equally fresh candidates it is preferred (SelectCandidate).
	SemiSyncAcking bool
}

// SiteView is everything Decide knows about one site.
type SiteView struct {
	// Name is the site's name from spec.sites.
	Name string
	// Role says what the site may become; empty means primary-candidate.
	Role v1alpha1.SiteRole
	// State is the debounced state from the site's Debouncer.
	State v1alpha1.SiteState
	// Executed is the site's executed GTID set as last observed.
	Executed gtid.Set
	// Replication is the site's replication health (ignored on the writer).
	Replication Replication
	// Stale is true when Executed and Replication come from an earlier probe
	// than this snapshot (the latest probe failed while the debounced state
	// held). Stale sets are not compared for divergence.
	Stale bool
	// ServerID is the GTID source id the site's own server writes under (MySQL
	// server_uuid, MariaDB "<domain>-<server_id>"), empty when unknown. A
	// replica holding more of the active server's own transactions than the
	// active site's snapshot is ahead of that snapshot, not diverged.
	ServerID string
	// NeverAnswered is true when the site has not answered a single probe
	// since its group was created, as far as the caller knows (its own
	// probes and the persisted status): Decide shows it unknown while it is
	// unreachable, so a site that never served is never failed over from
	// (ShownState, neveranswered.go).
	NeverAnswered bool
	// SemiSyncUnavailable is true when semi-sync is on in the spec and the
	// site's server cannot take part in it (MySQL without the semisync
	// plugins). Under required it is never made writable, so among equally
	// fresh candidates one that can is preferred (SelectCandidate).
	SemiSyncUnavailable bool
	// AdminFenced is true when an administrator fenced the site; it is never
	// promoted nor re-asserted while fenced.
	AdminFenced bool
	// DataReplaced is true when a reclone is replacing the site's data, or
	// may have left it partly replaced (v1alpha1.SiteRecovery.Holds: from
	// Cloning on, or after a failure there); the caller also marks it
	// AdminFenced. Nothing relies on what it holds: before its data was
	// replaced another replica was proven to hold all of it
	// (RecloneMayWipe), so it is never waited for as an acknowledger.
	DataReplaced bool
	// Diverged is true when the site is known to hold transactions the
	// authoritative history discarded; it is never promoted and never rejoins.
	Diverged bool
	// FenceConfirmed is true when the caller has proof the site cannot accept
	// writes even though it may not be observed read-only now: the operator never
	// unfenced it since it was last seen read-only, a SQL fence on it succeeded,
	// its sidecar reported it fenced or its mysqld down after the failure was
	// observed, its Pod is gone, or its lease deadline passed. A site that is
	// unreachable or unknown without this blocks every promotion.
	FenceConfirmed bool
	// MaybeWritable is true when an operation that makes the site writable
	// (a promotion, a re-assertion, an unfence) failed or timed out since
	// the site was last fenced: it may have taken effect, whatever the
	// site's probes said before. Such a site is not read-only to Decide:
	// reachable, it is fenced first whenever it is not the active site;
	// unreachable, it needs FenceConfirmed (evidence gathered after the
	// operation) like any site that may write.
	MaybeWritable bool
	// MayAcknowledge is set only under dataDurability required: the site
	// may hold commits of the active site that it acknowledged and no other
	// site holds (its semi-sync replica part was on when last read, or it
	// answers with it on; acknowledgers.go).
	MayAcknowledge bool
}

// FailoverRecord is one completed failover of the group's history.
type FailoverRecord struct {
	From       string
	To         string
	Generation int64
	Time       time.Time
	Kind       v1alpha1.FailoverKind
	// Lost is what the failover discarded: the old primary's transactions the
	// new one never received, empty until accounted. A site holding any of
	// them holds history the authority threw away.
	Lost gtid.Set
}

// Intent is an emergency failover whose intent is persisted and published
// (ActiveSite and Generation already name To) but whose target is not yet writable.
type Intent struct {
	From       string
	To         string
	Generation int64
	// Step is the step the failover's sequence persisted last.
	Step v1alpha1.FailoverStep
	// Abandoned are earlier targets of this failover that may have written
	// (status.failover.abandoned; Decision.Abandon).
	Abandoned []string
	// AbandonedWrote is what the abandoned targets are known to have
	// written (status.failover.abandonedGtidSet; Decision.AbandonedWrote).
	AbandonedWrote gtid.Set
}

// Input is one snapshot of a failover group, everything Decide looks at.
type Input struct {
	// Sites lists every site in spec.sites order, which is also priority order.
	Sites []SiteView
	// ActiveSite is status.activeSite, the authoritative writer. Empty means the
	// authority was lost; Decide then resolves it from History, then priority.
	ActiveSite string
	// Generation is status.topologyGeneration.
	Generation int64
	// History holds completed failovers, oldest first.
	History []FailoverRecord
	// Promoted is status.promotionGtidExecuted: the executed set of the last
	// failover's target when it was made writable; empty before the first
	// failover. The authority's history is Promoted plus what its writer
	// wrote since (see historyErrant).
	Promoted gtid.Set
	// PromotedKnown is true when Promoted was recorded by a promotion, so
	// that an empty Promoted means its target held nothing (status
	// .promotionRecorded); false, an empty Promoted is unknown and judges
	// nobody.
	PromotedKnown bool
	// InFlight is the emergency failover in flight, nil when none.
	InFlight *Intent
	// PlannedInFlight is the planned-failover guard: a planned failover owns
	// the topology, so Decide makes no topology change of its own.
	PlannedInFlight bool
	// Cooldown is spec.failoverCooldown: the least time between two failovers.
	Cooldown time.Duration
	// MaxLag is the lag above which a replica counts as lagging; zero means any lag.
	MaxLag time.Duration
	// Now is the time of the snapshot.
	Now time.Time
}

// Site returns the view of the named site.
func (in Input) Site(name string) (SiteView, bool) {
	for _, s := range in.Sites {
		if s.Name == name {
			return s, true
		}
	}
	return SiteView{}, false
}

// LastFailover is the newest History entry, nil when there is none.
func (in Input) LastFailover() *FailoverRecord {
	if len(in.History) == 0 {
		return nil
	}
	return &in.History[len(in.History)-1]
}

// Validate checks that the Input is well formed.
func (in Input) Validate() error {
	if len(in.Sites) == 0 {
		return ErrNoSites
	}
	seen := make(map[string]bool, len(in.Sites))
	for _, s := range in.Sites {
		if seen[s.Name] {
			return fmt.Errorf("site %q: %w", s.Name, ErrDuplicateSite)
		}
		seen[s.Name] = true
		if err := s.validate(); err != nil {
			return err
		}
	}
	if in.ActiveSite != "" && !seen[in.ActiveSite] {
		return fmt.Errorf("active site %q: %w", in.ActiveSite, ErrUnknownSite)
	}
	if in.InFlight != nil && (!seen[in.InFlight.From] || !seen[in.InFlight.To]) {
		return fmt.Errorf("failover in flight %s->%s: %w", in.InFlight.From, in.InFlight.To, ErrUnknownSite)
	}
	return nil
}

func (s SiteView) validate() error {
	switch s.State {
	case v1alpha1.StateWritable, v1alpha1.StateReadOnly, v1alpha1.StateUnreachable, v1alpha1.StateUnknown:
	default:
		return fmt.Errorf("site %q state %q: %w", s.Name, s.State, ErrBadState)
	}
	switch s.Role {
	case "", v1alpha1.RolePrimaryCandidate, v1alpha1.RoleDROnly, v1alpha1.RoleReadOnly:
	default:
		return fmt.Errorf("site %q role %q: %w", s.Name, s.Role, ErrBadRole)
	}
	return nil
}

// reachable reports whether the site answered its probes (writable or read-only).
func (s SiteView) reachable() bool {
	return s.State == v1alpha1.StateWritable || s.State == v1alpha1.StateReadOnly
}

// safe reports whether the site provably cannot accept writes. A site that
// may have been made writable is never safe while reachable: only a fence
// after that (which clears MaybeWritable) makes it so.
func (s SiteView) safe() bool {
	if s.MaybeWritable && s.reachable() {
		return false
	}
	return s.State == v1alpha1.StateReadOnly || (!s.reachable() && s.FenceConfirmed)
}

// mayWrite reports whether the site may accept writes as far as the
// snapshot can tell: observed writable, or looking read-only after an
// operation that may have made it writable.
func (s SiteView) mayWrite() bool {
	return s.State == v1alpha1.StateWritable || (s.MaybeWritable && s.State == v1alpha1.StateReadOnly)
}

// candidateRole reports whether the site may be promoted.
func (s SiteView) candidateRole() bool { return primaryCandidate(s.Role) }
