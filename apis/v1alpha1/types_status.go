package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SiteState is a site's debounced state as the operator sees it.
// +kubebuilder:validation:Enum=writable;read-only;unreachable;unknown
type SiteState string

const (
	// StateWritable means mysqld answers and accepts writes.
	StateWritable SiteState = "writable"
	// StateReadOnly means mysqld answers and is fenced.
	StateReadOnly SiteState = "read-only"
	// StateUnreachable means failureThreshold probes in a row failed.
	StateUnreachable SiteState = "unreachable"
	// StateUnknown means there is not yet enough evidence either way.
	StateUnknown SiteState = "unknown"
)

// FailoverKind tells an emergency failover from a planned one.
// +kubebuilder:validation:Enum=emergency;planned
type FailoverKind string

const (
	// KindEmergency is an automatic failover after the primary was lost.
	KindEmergency FailoverKind = "emergency"
	// KindPlanned is a switchover asked for with the planned-failover annotation.
	KindPlanned FailoverKind = "planned"
)

// MysqlFailoverGroupStatus is the topology authority.
type MysqlFailoverGroupStatus struct {
	// ActiveSite is the one site allowed to accept writes.
	// +optional
	ActiveSite string `json:"activeSite,omitempty"`

	// OperatorExecutableHash is the SHA-256 (hex) of the binary of the
	// operator that last wrote this status.
	// +optional
	OperatorExecutableHash string `json:"operatorExecutableHash,omitempty"`

	// TopologyGeneration goes up by one on every change of primary. Sidecars
	// adopt the view with the highest generation.
	// +optional
	TopologyGeneration int64 `json:"topologyGeneration,omitempty"`

	// ObservedGeneration is the spec generation last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Sites holds the last observation of every site.
	// +optional
	// +listType=map
	// +listMapKey=name
	Sites []SiteStatus `json:"sites,omitempty"`

	// PrimaryFailingSince is when the active site was first seen failing
	// (unreachable, or read-only while no planned failover or
	// administrator fence explains it); unset while it is writable. It
	// stays set through an emergency failover until the new active site
	// is writable.
	// +optional
	PrimaryFailingSince *metav1.Time `json:"primaryFailingSince,omitempty"`

	// Conditions are Ready, Degraded, FailoverBlocked, Progressing,
	// SemiSyncDegraded and SemiSyncUnavailable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Failover is the emergency failover in flight, persisted before each step
	// so that a restarted operator resumes it.
	// +optional
	Failover *FailoverIntent `json:"failover,omitempty"`

	// LastFailover records the most recent completed failover of either kind.
	// +optional
	LastFailover *FailoverRecord `json:"lastFailover,omitempty"`

	// FailoverHistory lists the latest completed failovers of either kind,
	// oldest first (at most MaxFailoverHistory), each with what it lost, so
	// that a newer failover never hides an earlier loss. A site holding a
	// transaction of any lost set is never made writable.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	FailoverHistory []FailoverRecord `json:"failoverHistory,omitempty"`

	// PromotionGtidExecuted is the new primary's executed GTID set when it was promoted.
	// +optional
	PromotionGtidExecuted string `json:"promotionGtidExecuted,omitempty"`

	// PromotionRecorded is true once a promotion recorded its set in
	// promotionGtidExecuted: an empty set then means the new primary held
	// no transaction, not that the set is unknown.
	// +optional
	PromotionRecorded bool `json:"promotionRecorded,omitempty"`

	// PlannedFailover is the state of the latest planned failover.
	// +optional
	PlannedFailover *PlannedFailoverStatus `json:"plannedFailover,omitempty"`

	// Phase is Updating while the ordered update rolls a new Pod template
	// through the sites, WaitingForUser when it stopped before the active
	// site (supervised), and empty otherwise.
	// +optional
	Phase GroupPhase `json:"phase,omitempty"`

	// Message says what Phase is doing or waiting for.
	// +optional
	Message string `json:"message,omitempty"`

	// UpdateProgressTime is when the ordered update began or last took a
	// step; unset while no update is in progress. The update is stalled
	// once it is older than spec.updates.progressDeadline.
	// +optional
	UpdateProgressTime *metav1.Time `json:"updateProgressTime,omitempty"`

	// UpdateSwitchover counts the ordered update's failed switchovers in a
	// row (docs/upgrades.md, "A failing switchover"); unset when none
	// failed since the update began.
	// +optional
	UpdateSwitchover *UpdateSwitchoverStatus `json:"updateSwitchover,omitempty"`

	// ReportsAuthenticatedAt is when every site's sidecar had reported with
	// its client certificate. From then on the operator refuses reports
	// that come without one (the end of the upgrade window, see
	// docs/security.md). The operator never clears it.
	// +optional
	ReportsAuthenticatedAt *metav1.Time `json:"reportsAuthenticatedAt,omitempty"`

	// LastRecloneRejection is the latest refused reclone-site request.
	// +optional
	LastRecloneRejection *RecloneRejection `json:"lastRecloneRejection,omitempty"`
}

// SiteStatus is one site's last observation.
type SiteStatus struct {
	// Name of the site.
	Name string `json:"name"`
	// State is the debounced state.
	// +optional
	State SiteState `json:"state,omitempty"`
	// GtidExecuted is the site's executed GTID set (MariaDB: gtid_binlog_pos).
	// +optional
	GtidExecuted string `json:"gtidExecuted,omitempty"`
	// Replicating is true when both replication threads run.
	// +optional
	Replicating bool `json:"replicating,omitempty"`
	// SecondsBehindSource is the replica's lag, absent when unknown.
	// +optional
	SecondsBehindSource *int64 `json:"secondsBehindSource,omitempty"`
	// ReplicationError is the last IO or SQL thread error.
	// +optional
	ReplicationError string `json:"replicationError,omitempty"`
	// LastTransitionTime is when State last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// Fenced is true when an administrator fenced the site or Bloodraven holds it read-only.
	// +optional
	Fenced bool `json:"fenced,omitempty"`
	// DivergentGtid lists transactions this site has that the active site never saw.
	// A site with divergent GTIDs never rejoins by itself.
	// +optional
	DivergentGtid string `json:"divergentGtid,omitempty"`
	// ServerID is the GTID source id the site's server writes under (MySQL
	// server_uuid, MariaDB "<domain>-<server_id>") as last observed, so that
	// its transactions are known for its own even while it is unreachable.
	// +optional
	ServerID string `json:"serverId,omitempty"`
	// SidecarExecutableHash is the SHA-256 (hex) of the binary the site's
	// sidecar runs, as its last report to this operator said.
	// +optional
	SidecarExecutableHash string `json:"sidecarExecutableHash,omitempty"`
	// MaybeWritable is true when an operation that makes the site writable
	// (promotion, re-assertion, unfence) failed or timed out, so it may have
	// taken effect. No other site is made writable until this site is fenced
	// by SQL or confirmed unable to write; its probes do not count.
	// +optional
	MaybeWritable bool `json:"maybeWritable,omitempty"`
	// LeaseFenceUnproven is true from the moment the operator claims the
	// site to make it writable until an arm of its mysqld's lease fence (the
	// event that fences it when its lease runs out) is known to have
	// succeeded since, or the site is seen read-only. While it is true the
	// site's lease deadline confirms nothing: a sidecar that paused with its
	// mysqld writable and no event armed would never fence it.
	// +optional
	LeaseFenceUnproven bool `json:"leaseFenceUnproven,omitempty"`
	// SemiSync is the site's semi-sync replication as last observed,
	// absent while semi-sync is off on it.
	// +optional
	SemiSync *SiteSemiSync `json:"semiSync,omitempty"`
	// Recovery is the site's latest reclone (docs/recovery.md).
	// +optional
	Recovery *SiteRecovery `json:"recovery,omitempty"`
}

// SiteSemiSync is one server's semi-sync replication.
type SiteSemiSync struct {
	// Source is true when commits on this server wait for acknowledgements.
	// +optional
	Source bool `json:"source,omitempty"`
	// Replica is true when this server acknowledges what it receives.
	// +optional
	Replica bool `json:"replica,omitempty"`
	// Waiting is true on a source that waits for acknowledgements now;
	// false once it fell back to asynchronous replication.
	// +optional
	Waiting bool `json:"waiting,omitempty"`
	// AcknowledgingReplicas is how many replicas a source counts as
	// semi-sync clients.
	// +optional
	AcknowledgingReplicas int32 `json:"acknowledgingReplicas,omitempty"`
	// CommitsWithoutAck counts the commits a source acknowledged to its
	// clients with no replica's acknowledgement since mysqld started.
	// +optional
	CommitsWithoutAck int64 `json:"commitsWithoutAck,omitempty"`
}

// MaxFailoverHistory bounds status.failoverHistory.
const MaxFailoverHistory = 16

// FailoverStep is how far an emergency failover got.
// +kubebuilder:validation:Enum=Intent;Fencing;Promoting;Routing;Repointing
type FailoverStep string

const (
	// StepIntent: generation and target persisted and published.
	StepIntent FailoverStep = "Intent"
	// StepFencing: waiting until the old primary is confirmed unable to write.
	StepFencing FailoverStep = "Fencing"
	// StepPromoting: relay log drained, target being made writable.
	StepPromoting FailoverStep = "Promoting"
	// StepRouting: labels, Services and DNS being flipped.
	StepRouting FailoverStep = "Routing"
	// StepRepointing: other replicas being pointed at the new primary.
	StepRepointing FailoverStep = "Repointing"
)

// FailoverIntent is an emergency failover in flight.
type FailoverIntent struct {
	// From is the site that lost the primary role.
	From string `json:"from"`
	// To is the site being promoted.
	To string `json:"to"`
	// Generation is the topology generation this failover publishes.
	Generation int64 `json:"generation"`
	// Step is the last step persisted.
	Step FailoverStep `json:"step"`
	// StartTime is when the intent was persisted.
	StartTime metav1.Time `json:"startTime"`
	// FenceDeadline is when the old primary's lease runs out if nothing confirms its fence sooner.
	// +optional
	FenceDeadline *metav1.Time `json:"fenceDeadline,omitempty"`
	// FenceConfirmedBy says how the old primary was confirmed unable to write.
	// +optional
	FenceConfirmedBy string `json:"fenceConfirmedBy,omitempty"`
	// SourceGtidExecuted is the old primary's last known GTID set, used to count lost transactions.
	// +optional
	SourceGtidExecuted string `json:"sourceGtidExecuted,omitempty"`
	// SalvagedTransactions counts what the target took from the old
	// primary's binlogs so far; lastFailover gets it on completion.
	// +optional
	SalvagedTransactions int64 `json:"salvagedTransactions,omitempty"`
	// Abandoned lists the sites this failover targeted before it was
	// retargeted whose promotion may have taken effect (maybe-writable when
	// abandoned). What they wrote until their fence may be the new
	// target's history: until the new target is made writable, sites
	// holding it are not judged diverged for it; from then on the target's
	// promotion set judges it. A site the failover moves back to stays
	// listed.
	// +optional
	Abandoned []string `json:"abandoned,omitempty"`
	// AbandonedGtidSet is what the abandoned targets are known to have
	// written: their own transactions outside the history, as read from
	// any site while they were not this failover's target. Only these are
	// the history's until the target is made writable, not every
	// transaction of their servers.
	// +optional
	AbandonedGtidSet string `json:"abandonedGtidSet,omitempty"`
	// ReceivedLostGtidSet names transactions a target received and could
	// not apply before its promotion: its relay log was gone, or its
	// applier stalled past the drain bounds. lastFailover counts those the
	// promoted site lacks as lost.
	// +optional
	ReceivedLostGtidSet string `json:"receivedLostGtidSet,omitempty"`
}

// FailoverRecord describes a completed failover.
type FailoverRecord struct {
	// Time the failover completed.
	Time metav1.Time `json:"time"`
	// From is the former primary site.
	From string `json:"from"`
	// To is the new primary site.
	To string `json:"to"`
	// Kind is emergency or planned.
	Kind FailoverKind `json:"kind"`
	// Generation is the topology generation that named To active.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// TransactionsLost counts the old primary's transactions the new primary never received.
	// Absent until the old primary can be read again.
	// +optional
	TransactionsLost *int64 `json:"transactionsLost,omitempty"`
	// LostGtidSet names those transactions.
	// +optional
	LostGtidSet string `json:"lostGtidSet,omitempty"`
	// ReceivedLostGtidSet names the transactions a candidate received and
	// could not apply before the promotion that the new primary lacks
	// (failoverIntent's); they count in transactionsLost from the
	// failover's end.
	// +optional
	ReceivedLostGtidSet string `json:"receivedLostGtidSet,omitempty"`
	// SourceLossPending is true while the old primary is still to be read:
	// transactionsLost counts only what is read so far
	// (receivedLostGtidSet, abandoned targets), a lower bound.
	// +optional
	SourceLossPending bool `json:"sourceLossPending,omitempty"`
	// Abandoned are the targets this failover moved away from whose
	// promotion may have taken effect (failoverIntent's abandoned): what
	// they wrote that the new primary did not hold when it was made
	// writable counts in transactionsLost.
	// +optional
	Abandoned []string `json:"abandoned,omitempty"`
	// AbandonedLossPending are the abandoned targets still to be read:
	// while any is listed, transactionsLost is a lower bound.
	// +optional
	AbandonedLossPending []string `json:"abandonedLossPending,omitempty"`
	// LossLowerBound is true when a later failover came before this one's
	// loss was read in full (the old primary or an abandoned target was
	// still unread): transactionsLost counts what was read until then, 0
	// when nothing was, and is at least what was lost, never final.
	// +optional
	LossLowerBound bool `json:"lossLowerBound,omitempty"`
	// SalvagedTransactions counts the old primary's transactions the new
	// primary took from the old primary's binlogs during the failover
	// (spec.failover.salvageTimeout), before it was made writable.
	// +optional
	SalvagedTransactions int64 `json:"salvagedTransactions,omitempty"`
}

// LossPending reports whether r's transactionsLost is not final: absent,
// or a lower bound while a site is still to be read or for good
// (LossLowerBound).
func (r *FailoverRecord) LossPending() bool {
	return r.TransactionsLost == nil || r.SourceLossPending || len(r.AbandonedLossPending) > 0 || r.LossLowerBound
}

// PlannedFailoverPhase is a step of the planned-failover state machine.
// +kubebuilder:validation:Enum=Pending;Validating;Deferred;Draining;WaitingForLag;WaitingForDragonflySync;PromotingDragonfly;Promoting;Resuming;Succeeded;Failed
type PlannedFailoverPhase string

// PlannedFailoverStatus is the status block of a planned failover.
type PlannedFailoverStatus struct {
	// Phase is the current phase.
	Phase PlannedFailoverPhase `json:"phase"`
	// Request is the annotation value this block answers.
	// +optional
	Request string `json:"request,omitempty"`
	// Origin is update when the ordered update started this request to
	// switch the stale active site over; absent (or annotation) when a
	// person asked for it.
	// +optional
	Origin PlannedOrigin `json:"origin,omitempty"`
	// Target is the site being promoted.
	// +optional
	Target string `json:"target,omitempty"`
	// SourcePrimary is the site that was active when the request started.
	// +optional
	SourcePrimary string `json:"sourcePrimary,omitempty"`
	// SourceGtidAtFence is the source's executed GTID set once it was fenced.
	// +optional
	SourceGtidAtFence string `json:"sourceGtidAtFence,omitempty"`
	// TargetGtidAtPromotion is the target's executed GTID set when it was promoted.
	// +optional
	TargetGtidAtPromotion string `json:"targetGtidAtPromotion,omitempty"`
	// StartTime is when the request was first observed.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// PhaseStartTime is when the current phase began.
	// +optional
	PhaseStartTime *metav1.Time `json:"phaseStartTime,omitempty"`
	// CompletionTime is when the request ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// DurationSeconds is CompletionTime minus StartTime.
	// +optional
	DurationSeconds int64 `json:"durationSeconds,omitempty"`
	// TransactionsLost is 0 for every successful planned failover.
	// +optional
	TransactionsLost *int64 `json:"transactionsLost,omitempty"`
	// Reason is a CamelCase word saying why the request failed or waits.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the phase to a person.
	// +optional
	Message string `json:"message,omitempty"`
	// RetryAfter is when a Deferred request is validated again.
	// +optional
	RetryAfter *metav1.Time `json:"retryAfter,omitempty"`
	// MaxLagWait is the lag budget in force for this request.
	// +optional
	MaxLagWait *metav1.Duration `json:"maxLagWait,omitempty"`
	// Dragonfly reports the cache's part of the switchover.
	// +optional
	Dragonfly *DragonflyPromotionStatus `json:"dragonfly,omitempty"`
}

// DragonflyPromotionStatus reports Dragonfly co-promotion.
type DragonflyPromotionStatus struct {
	// Enabled mirrors spec.dragonfly.enabled when the request started.
	Enabled bool `json:"enabled"`
	// SessionsPreserved is false when the cache was promoted without catching up.
	// +optional
	SessionsPreserved *bool `json:"sessionsPreserved,omitempty"`
	// PromotionMethod is REPLTAKEOVER (Dragonfly), FAILOVER (Redis), or
	// REPLICAOF NO ONE when the target was promoted without a takeover.
	// +optional
	PromotionMethod string `json:"promotionMethod,omitempty"`
	// SyncWaitSeconds is how long the target took to catch up.
	// +optional
	SyncWaitSeconds int64 `json:"syncWaitSeconds,omitempty"`
	// SourceOffset is the source's replication offset captured when the
	// sync wait began; a restarted operator waits for the same offset.
	// +optional
	SourceOffset *int64 `json:"sourceOffset,omitempty"`
}
