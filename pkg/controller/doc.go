// Package controller is the operator: a controller-runtime reconciler that
// converges each MysqlFailoverGroup's Kubernetes objects (through
// pkg/routing), and one poll loop per group that observes every site,
// decides with pkg/topology and acts, at most one topology operation per pass.
//
// Per pass the loop:
//   - reads the group straight from the API server (never a stale cache);
//   - probes every site in parallel, each probe bounded by its own deadline,
//     so a hung site never delays the others, and feeds the per-site
//     topology.Debouncer;
//   - builds topology.Input, judging unreachable sites with
//     topology.ConfirmFence over the sidecar reports the /active-site API
//     recorded (Registry), and marking the facts Decide's rules read: sites
//     that never answered (firstanswer.go) and sites an administrator fenced
//     (adminfence.go);
//   - decides with topology.Decide, used as it is (the loop never rewrites
//     a Decision), and acts: fence extra writers or the admin-fenced active
//     site, run the emergency failover (pkg/failover), re-assert the active
//     site, or keep replicas pointed at the active site;
//   - writes status through one patch helper (optimistic lock, skipped when
//     nothing changed), and records conditions, Events and metrics.
//
// The first start of a group (no status.activeSite) makes
// topology.BootstrapSite (the first primary-candidate site) active at
// generation 1; the loop then makes it writable and points the others at it.
//
// A planned-failover request (the annotation) is run by failover.Planned in
// the group's loop (planned.go): one phase per pass, the next pass at once
// while phases move on, and the loop woken when the annotation appears;
// automatic evaluation pauses while it holds the topology.
//
// When the view the Registry publishes for a group changes, the nudger
// (nudge.go) sends POST /peer/refresh to every site's sidecar in the
// background, so they fetch the new view now rather than at their next tick.
// It carries no data and never holds up the loop; the wait for the target's
// sidecar before promotion stays the safety check.
//
// Before anything else a pass checks the authority against the generations
// the sidecars hold (authority_hold.go): a status that went back holds the
// group (AuthorityRegressed) until a person confirms. The status patcher
// never lowers the generation and abandons a write when another process
// moved the authority under it. Every step that makes a site writable asks
// mayMakeWritable first (leadership.go): a snapshot at most one poll
// interval old, and leadership still held. A Pod gone confirms a fence, or
// counts a peer as serving nothing, only once its node's kubelet heartbeat
// advanced by the Pod's grace period plus one interval (podgone.go). A
// confirm-authority value that is not applied is removed with an
// AuthorityConfirmFailed Event; reports and confirmations carry bounded
// generations (topology.MaxGeneration, MaxConfirmGeneration).
//
// The /active-site API (api.go) serves views only on the elected leader and
// only views its loops published, each signed by the key ViewKeys
// (viewkeys.go) keeps in a Secret of the operator's namespace; ViewKeys also
// publishes the accepted public keys to every group namespace. A sidecar's
// report counts as fence evidence only when it echoes a view this process
// served at or after the failure was first seen, by the views' sequence
// numbers rather than any clock (registry_seq.go, topology.Report.ObservedAfter),
// and the Registry ends a run of reports when the sidecar process may have
// changed (a new boot id, or a Pod listing that differs from the previous
// one: a new Pod UID, or a sidecar restart count or start that changed).
//
// Seams: Resolver maps (group, site) to a mysql.Config (default: the per-site
// Service); Router is pkg/routing's Router; Clock tells the time and runs the
// timers (k8s.io/utils/clock; the simulation steps its own); SidecarURL maps a site to the sidecar it nudges. Everything
// is wired by New, which cmd/operator calls.
package controller
