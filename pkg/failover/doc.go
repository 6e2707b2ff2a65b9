// Package failover owns the emergency failover of a failover group as a
// restart-safe step machine, and the rule that confirms an old primary can no
// longer accept writes.
//
// The sequence, each step persisted in status.failover before the next runs:
//
//  1. Intent: topologyGeneration+1 and activeSite=target are persisted with a
//     FailoverIntent (step Intent), then
//  2. published on /active-site, so that the old primary's sidecar fences by view;
//  3. Fencing: the old primary is fenced by SQL when it answers; otherwise the
//     step waits for its sidecar's report (fenced, or mysqld down, sent after
//     the failure was first observed), its Pod to be gone, or its lease deadline;
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
// The package does no Kubernetes or SQL I/O of its own: it acts through the
// interfaces in ports.go (DB, Router, Persister, Publisher, Notifier, Clock),
// which pkg/controller implements for real and pkg/sim for the simulation.
// Time always comes from the Clock or from arguments.
//
// Planned failover (the annotation state machine) is a later addition: it
// plugs in beside Emergency through PlannedInFlight, and the cooldown already
// counts status.lastFailover of either kind.
package failover
