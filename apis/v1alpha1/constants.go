package v1alpha1

// Annotations and labels.
const (
	// PlannedFailoverAnnotation asks for a planned failover: <site>[:maxLagWait=<duration>].
	PlannedFailoverAnnotation = "bloodraven.shipstream.io/planned-failover"
	// FencedSitesAnnotation fences sites by an administrator: <site>[,<site>...].
	// A fenced site is never a failover candidate; a fenced active site is
	// made read-only and the group waits, without promoting another site.
	FencedSitesAnnotation = "bloodraven.shipstream.io/fenced-sites"
	// RestartInPlaceAnnotation asks the operator to have a site's sidecar
	// re-execute its own binary in place: <site>. The operator clears it
	// once asked (kubectl bloodraven restart-inplace; docs/upgrades.md).
	RestartInPlaceAnnotation = "bloodraven.shipstream.io/restart-inplace"
	// LabelGroup is set on every object the operator makes for a group.
	LabelGroup = "bloodraven.shipstream.io/group"
	// LabelSite names the site a Pod or object belongs to.
	LabelSite = "bloodraven.shipstream.io/site"
	// LabelRole is primary on the active site's Pods and replica elsewhere.
	LabelRole = "bloodraven.shipstream.io/role"
	// LabelRoutable is "true" on the Pods of sites that serve reads
	// (topology.ReadRoutes); the read Services select on it.
	LabelRoutable = "bloodraven.shipstream.io/routable"
	// LabelServiceRole is on every role Service: rw, ro or r.
	LabelServiceRole = "bloodraven.shipstream.io/service-role"
	// RolePrimary and RoleReplica are LabelRole's values.
	RolePrimary = "primary"
	RoleReplica = "replica"
	// TaintLostPrimary is put on a losing site's nodes after a failover.
	TaintLostPrimary = "bloodraven.shipstream.io/lost-primary"
)

// Condition types.
const (
	ConditionReady           = "Ready"
	ConditionDegraded        = "Degraded"
	ConditionFailoverBlocked = "FailoverBlocked"
	// ConditionSemiSyncDegraded is true while semi-sync is on and the
	// active site's commits do not wait for the acknowledgements asked.
	ConditionSemiSyncDegraded = "SemiSyncDegraded"
	// ConditionSemiSyncUnavailable is true while semi-sync is on and a site
	// whose probe answered cannot take part in it (MySQL without the
	// semisync plugins).
	ConditionSemiSyncUnavailable = "SemiSyncUnavailable"
	// ConditionProgressing is true while the group changes: an emergency
	// or planned failover, the ordered update or a reclone runs.
	ConditionProgressing = "Progressing"
)

// Progressing's reasons (and ReasonFailoverRunning).
const (
	ReasonPlannedFailoverRunning = "PlannedFailoverRunning"
	ReasonUpdating               = "Updating"
	ReasonRecloning              = "Recloning"
	ReasonIdle                   = "Idle"
)

// Condition reasons.
const (
	ReasonHealthy           = "Healthy"
	ReasonNotReady          = "NotReady"
	ReasonPeerDown          = "PeerDown"
	ReasonReplicaLagging    = "ReplicaLagging"
	ReasonReplicationBroken = "ReplicationBroken"
	ReasonNoPrimary         = "NoPrimary"
	ReasonTotalLoss         = "TotalLoss"
	ReasonSplitBrain        = "SplitBrain"
	ReasonFailoverRunning   = "FailoverRunning"
	ReasonNotBlocked        = "NotBlocked"
	ReasonCooldown          = "Cooldown"
	ReasonNoCandidate       = "NoEligibleCandidate"
	ReasonDivergence        = "Divergence"
	ReasonFenceUnconfirmed  = "OldPrimaryNotConfirmedFenced"
	// ReasonAcknowledgerUnread: under dataDurability required, a site that
	// may hold acknowledged commits the target lacks cannot be read.
	ReasonAcknowledgerUnread = "AcknowledgerUnreachable"
	// ReasonAcknowledgerUnpromotable: under dataDurability required, a
	// site that cannot be promoted (administrator-fenced, another role,
	// its applier broken) holds commits the target lacks that it may have
	// acknowledged.
	ReasonAcknowledgerUnpromotable = "AcknowledgerNotPromotable"
	// SemiSyncDegraded's reasons.
	ReasonSemiSyncOff        = "SemiSyncOff"
	ReasonSemiSyncWaiting    = "Acknowledged"
	ReasonSemiSyncFallback   = "AsyncFallback"
	ReasonSemiSyncFewReplies = "TooFewAcknowledging"
	ReasonSemiSyncUnknown    = "NotObserved"
	// SemiSyncUnavailable's reasons (and ReasonSemiSyncOff).
	ReasonSemiSyncPluginMissing = "PluginMissing"
	ReasonSemiSyncAvailable     = "Available"
)

// Planned failover phases.
const (
	PhasePending                 PlannedFailoverPhase = "Pending"
	PhaseValidating              PlannedFailoverPhase = "Validating"
	PhaseDeferred                PlannedFailoverPhase = "Deferred"
	PhaseDraining                PlannedFailoverPhase = "Draining"
	PhaseWaitingForLag           PlannedFailoverPhase = "WaitingForLag"
	PhaseWaitingForDragonflySync PlannedFailoverPhase = "WaitingForDragonflySync"
	PhasePromotingDragonfly      PlannedFailoverPhase = "PromotingDragonfly"
	PhasePromoting               PlannedFailoverPhase = "Promoting"
	PhaseResuming                PlannedFailoverPhase = "Resuming"
	PhaseSucceeded               PlannedFailoverPhase = "Succeeded"
	PhaseFailed                  PlannedFailoverPhase = "Failed"
)

// Terminal reports whether a planned failover in this phase is over.
func (p PlannedFailoverPhase) Terminal() bool {
	return p == PhaseSucceeded || p == PhaseFailed
}

// Planned failover reasons.
const (
	ReasonUnknownSite          = "UnknownSite"
	ReasonTargetUnhealthy      = "TargetUnhealthy"
	ReasonCooldownActive       = "CooldownActive"
	ReasonCancelled            = "Cancelled"
	ReasonConcurrentOperation  = "ConcurrentOperation"
	ReasonLagTimeout           = "LagTimeout"
	ReasonSourceCrashed        = "SourceCrashed"
	ReasonExecuteFailed        = "ExecuteFailed"
	ReasonInvalidRequest       = "InvalidRequest"
	ReasonAlreadyActive        = "AlreadyActive"
	ReasonDragonflySyncTimeout = "DragonflySyncTimeout"
	ReasonDragonflyPromoFailed = "DragonflyPromotionFailed"
)

// Event reasons.
const (
	EventFailoverStarted  = "FailoverStarted"
	EventFailoverExecuted = "FailoverExecuted"
	EventFailoverBlocked  = "FailoverBlocked"
	EventDNSFlipped       = "DNSFlipped"
	// EventReadRouting (Normal): a site joined or left the read Services.
	EventReadRouting                = "ReadRoutingChanged"
	EventDNSFlipFailed              = "DNSFlipFailed"
	EventPrimaryReasserted          = "PrimaryReasserted"
	EventExtraWriterFenced          = "ExtraWriterFenced"
	EventSiteStateChanged           = "SiteStateChanged"
	EventTransactionsLost           = "TransactionsLost"
	EventDivergenceDetected         = "DivergenceDetected"
	EventPlannedFailoverStarted     = "PlannedFailoverStarted"
	EventPlannedFailoverSkipped     = "PlannedFailoverSkipped"
	EventPlannedFailoverRejected    = "PlannedFailoverRejected"
	EventPlannedFailoverDeferred    = "PlannedFailoverDeferred"
	EventPlannedFailoverDraining    = "PlannedFailoverDraining"
	EventPlannedFailoverLagOK       = "PlannedFailoverLagOK"
	EventPlannedFailoverCompleted   = "PlannedFailoverCompleted"
	EventPlannedFailoverFailed      = "PlannedFailoverFailed"
	EventDragonflyPromotionStarted  = "DragonflyPromotionStarted"
	EventDragonflyPromotionComplete = "DragonflyPromotionCompleted"
	EventDragonflyPromotionFailed   = "DragonflyPromotionFailed"
	EventDragonflySyncTimeout       = "DragonflySyncTimeout"
	// EventDragonflyTrafficNotMoved: a planned failover could not move the
	// cache's traffic label; MySQL goes on, the follow loop moves it later.
	EventDragonflyTrafficNotMoved = "DragonflyTrafficNotMoved"
	// EventAdminFenced: the active site was fenced by SQL because the
	// fenced-sites annotation names it.
	EventAdminFenced = "AdminFenced"
	// EventFencedSitesIgnored: entries of the fenced-sites annotation that name
	// no site of the group were ignored.
	EventFencedSitesIgnored = "FencedSitesIgnored"
	// EventReportRejected: a sidecar report was refused because it did not
	// prove it came from the site it names (rate-limited, Warning).
	EventReportRejected = "ReportRejected"
)

// Decision reasons added by pkg/topology.
const (
	// ReasonStaleWriter: a site other than the active site is writable (one writer, the wrong one).
	ReasonStaleWriter = "StaleWriter"
	// ReasonAdminFenced: an administrator fenced the site the decision would make writable.
	ReasonAdminFenced = "AdminFenced"
	// ReasonPlannedInFlight: a planned failover holds the topology; automatic changes wait.
	ReasonPlannedInFlight = "PlannedFailoverInFlight"
	// ReasonPrimaryUnreachable: the active site is unreachable and a candidate may be promoted.
	ReasonPrimaryUnreachable = "PrimaryUnreachable"
	// ReasonReassertUnsafe: the active site is read-only but may not be made
	// writable again: it lacks transactions of its own that another site
	// holds, or holds transactions outside the authority's history. The
	// freshest eligible site is promoted instead, or the block says why not.
	ReasonReassertUnsafe = "ReassertUnsafe"
	// ReasonMaybeWritable: a site other than the active site looks read-only,
	// but an operation that makes it writable failed or timed out since it was
	// last fenced (status.sites[].maybeWritable): it is fenced first.
	ReasonMaybeWritable = "MaybeWritable"
)

// Execution safety (docs/operator.md, "Execution safety").
const (
	// EventMaybeWritable: a promotion, re-assertion or unfence failed or
	// timed out and may have taken effect; the site is recorded maybe-writable.
	EventMaybeWritable = "MaybeWritable"
	// ReasonAuthorityRegressed (condition Degraded and FailoverBlocked, and
	// the Event): a sidecar reports a topologyGeneration higher than status
	// holds (status was emptied, restored from an older backup, or written
	// back). The operator changes nothing until a person confirms the
	// authority with ConfirmAuthorityAnnotation.
	ReasonAuthorityRegressed = "AuthorityRegressed"
	// EventAuthorityConfirmed: a person confirmed the authority; status now
	// holds a generation above every one any sidecar reported.
	EventAuthorityConfirmed = "AuthorityConfirmed"
	// EventAuthorityConfirmFailed (Warning): a confirm-authority annotation
	// was refused (not a usable value, below a reported generation, or
	// nothing to confirm) and removed; nothing changed.
	EventAuthorityConfirmFailed = "AuthorityConfirmFailed"
	// ConfirmAuthorityAnnotation confirms a regressed authority:
	// <generation>, the highest generation the AuthorityRegressed condition
	// names. The operator then sets topologyGeneration above it and resumes.
	ConfirmAuthorityAnnotation = "bloodraven.shipstream.io/confirm-authority"
	// ReasonStaleSnapshot: a step that makes a site writable was not run
	// because the pass's observations are older than one poll interval (the
	// operator was paused), or this operator does not hold leadership now.
	ReasonStaleSnapshot = "StaleSnapshot"
	// ReasonSidecarSilent: a step that makes a site writable was not run
	// because that site's sidecar has not asked the operator for the view
	// within two peerCheckIntervals: nothing would enforce its lease.
	ReasonSidecarSilent = "SidecarSilent"
	// EventLeaseFenceNotArmed (Warning): a step that makes a site writable
	// was not run because that site's mysqld's lease fence could not be
	// armed first (or its sidecar's last ask left too little lease to arm
	// it for).
	EventLeaseFenceNotArmed = "LeaseFenceNotArmed"
	// EventSemiSyncNotSet (Warning): a site about to be made writable could
	// not be made the semi-sync source first. With dataDurability required
	// it was not made writable; with preferred it was, and its first
	// commits may go out without a replica's acknowledgement.
	EventSemiSyncNotSet = "SemiSyncNotSet"
)

// Planned failover reasons added by the planned-failover state machine.
const (
	// ReasonSourceFenceFailed: the source could not be fenced within drainTimeout;
	// whatever was applied was undone and the source left writable.
	ReasonSourceFenceFailed = "SourceFenceFailed"
	// ReasonTargetLacksFencedSet: the target, already named active, no longer
	// held the fenced source's GTID set when it was to be made writable; a
	// new generation named the source active again and it was unfenced.
	ReasonTargetLacksFencedSet = "TargetLacksFencedSet"
)

// ReasonDNSFlipFailed marks a Succeeded planned failover whose DNSEndpoint
// could not be pointed at the new primary yet; the operator keeps trying.
const ReasonDNSFlipFailed = "DNSFlipFailed"

// Binlog salvage during an emergency failover (spec.failover.salvageTimeout).
const (
	// EventTailSalvaged (Normal): the new primary took the old primary's
	// missing transactions from its binlogs before it was made writable.
	EventTailSalvaged = "TailSalvaged"
	// EventSalvageSkipped (Normal): no salvage was made: the old primary
	// could not be read in time, or the salvage did not finish; what it
	// holds and the new primary lacks is counted as lost once it is read.
	EventSalvageSkipped = "SalvageSkipped"
	// EventSalvageRefused (Warning): the old primary was readable but its
	// tail was not taken, because taking it would diverge from what the
	// new primary holds, or it holds transactions the history discarded.
	EventSalvageRefused = "SalvageRefused"
)

// EventRelayLogShort (Warning): an emergency failover's target, ranked on
// transactions its probe showed in its relay log, lacked them after the
// drain (its relay log was gone: a restart or a reset since the read). It
// was not promoted on that pass; the candidates are ranked again on what
// it executed.
const EventRelayLogShort = "RelayLogShort"

// A drain that ran out of spec's drain timeout with the target short of
// what it received (topology.JudgeDrain).
const (
	// EventRelayDrainSlow (Normal): the target's relay log still holds what
	// it received and its applier advances: the promotion waits on,
	// bounded by progress and overall.
	EventRelayDrainSlow = "RelayDrainSlow"
	// EventRelayDrainStalled (Warning): the target's applier stopped, or
	// stood still, or outran the overall bound: what it received and did
	// not apply is recorded lost (failoverIntent.receivedLostGtidSet) and
	// the candidates are ranked again on what they executed.
	EventRelayDrainStalled = "RelayDrainStalled"
)
