// Package failover executes: the emergency failover of a failover group as a
// restart-safe step machine, and the planned-failover state machine. The
// emergency sequence decides nothing of its own: whether it starts, moves to
// another target or may promote is read from the pass's topology.Decision
// (Start, Retarget, Promote, Promotes), and whether an old primary is
// confirmed unable to write from topology.ConfirmFence.
//
// The sequence, each step persisted in status.failover before the next runs:
//
//  1. Intent: topologyGeneration+1 and activeSite=target are persisted with a
//     FailoverIntent (step Intent), then
//  2. published on /active-site, so that the old primary's sidecar fences by view;
//  3. Fencing: the old primary is fenced by SQL when it answers; otherwise the
//     step waits until topology.ConfirmFence confirms it: its sidecar's report
//     (fenced, or mysqld down, sent after the failure was first observed), its
//     Pod gone, or its lease deadline passed;
//  4. Promoting: the target's relay log is drained (bounded, never fatal) and
//     the target is promoted (replication forgotten, made writable);
//  5. Routing: role labels, the -primary Service and the DNSEndpoint follow
//     the target and the losing site's nodes are tainted;
//  6. Repointing: every other reachable replica follows the target;
//  7. the intent is cleared and lastFailover persisted.
//
// Emergency.Advance is called once per poll pass with the pass's snapshot and
// topology decision; it runs as many steps as it safely can and returns when
// it must wait for new evidence. A restarted operator finds the persisted step
// and resumes there; every step is idempotent.
//
// Execution safety: every step that makes a site writable first asks
// Pass.MayMakeWritable (the caller's gate: a fresh snapshot, leadership
// held) and waits for the next pass when it says no. Then it claims the
// site (claim.go): the maybe-writable mark is persisted with an optimistic
// lock on the status the pass decided on, and the statement runs only when
// that write lands, so a process paused after the gate cannot act after
// another operator process wrote. Right before the statement it arms the
// site's mysqld's lease fence (leasefence.go), and a site whose fence
// cannot be armed is not made writable. A promotion or unfence that fails may have
// taken effect: the mark stays (MarkMaybeWritable), and Decide treats the
// site as a possible writer until a SQL fence clears it (RecordFenced).
//
// The package does no Kubernetes or SQL I/O of its own: it acts through the
// interfaces in ports.go (DB, Router, Persister, Publisher, Notifier, Clock),
// which pkg/controller implements for real and internal/sim for the simulation.
// Time always comes from the Clock or from arguments.
//
// Planned is the planned-failover state machine behind the annotation
// bloodraven.shipstream.io/planned-failover=<site>[:maxLagWait=<duration>]
// (ParsePlannedRequest reads it, strictly). Planned.Step runs one phase per
// call and persists status.plannedFailover before returning: Pending (parse),
// Validating (target known, primary-candidate, a replicating read-only
// replica, no emergency in flight, cooldown over), Deferred (cooldown with
// onCooldown: defer), Draining (strip the primary role label, SQL-fence the
// source and record sourceGtidAtFence; then kill application connections
// until none are left or drainTimeout runs out), WaitingForLag (until the
// target's executed set holds sourceGtidAtFence, a short WaitForGTID slice
// per call; past maxLagWait the source is unfenced and relabelled), Promoting
// (the target is named active in a new generation when it caught up; then,
// once its sidecar holds that generation and the GTID check is repeated, it
// is promoted and labels and DNS follow), Resuming (other sites repointed,
// lastFailover recorded) and Succeeded or Failed. transactionsLost is the
// fenced set minus the target's set at promotion: 0 by construction. While a
// planned failover holds the topology (PlannedHolds: Draining to Resuming)
// PlannedInFlight pauses automatic evaluation; Deferred holds nothing. Both
// paths write status.lastFailover, so the cooldown is shared, and both use
// the same promotion primitives (DB.Promote, DrainRelayLog, pointDNS,
// repointReplicas). The Dragonfly phases (WaitingForDragonflySync,
// PromotingDragonfly; planned_cache*.go) run between WaitingForLag and
// Promoting when the request started with Dragonfly enabled and PlannedEnv
// has a Cache; PromoteCacheEmergency is the emergency path's cache
// promotion, run beside the MySQL sequence. Planned acts through
// PlannedEnv: the ports above plus PlannedDB, Annotator and PlannedNotifier,
// and optionally Cache, CacheRouter and a CacheNotifier.
package failover
