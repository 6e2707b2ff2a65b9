// Package grouploop is the per-group poll loop of the operator: one Loop per
// MysqlFailoverGroup observes every site, decides with pkg/topology and
// acts, at most one topology operation per pass. pkg/controller starts and
// stops the loops; every loop reads what the operator process shares (its
// clients, the authority's Registry, the clock, the settings) through an
// Env. Step makes one pass, so a caller can drive a Loop in logical time
// (the simulation does, through controller.GroupStepper); Run makes passes
// on the Env's clock until its context ends.
//
// Per pass the loop:
//   - reads the group straight from the API server (never a stale cache);
//   - probes every site in parallel, each probe bounded by its own deadline,
//     so a hung site never delays the others, and feeds the per-site
//     topology.Debouncer;
//   - builds topology.Input, judging unreachable sites with
//     topology.ConfirmFence over the sidecar reports the /active-site API
//     recorded (authority.Registry), and marking the facts Decide's rules
//     read: sites that never answered (firstanswer.go) and sites an
//     administrator fenced (adminfence.go);
//   - decides with topology.Decide, used as it is (the loop never rewrites
//     a Decision), and acts: fence extra writers or the admin-fenced active
//     site, run the emergency failover (pkg/failover), re-assert the active
//     site, or keep replicas pointed at the active site;
//   - after a pass that only maintained the group, takes the ordered
//     update's next step (rollout.go, planned by topology.PlanRollout): one
//     stale site's Deployment applied, or the update's switchover started;
//     and removes the lost-primary taint from the active site's nodes once
//     it is seen writable (untaint.go);
//   - labels the sites that serve reads as topology.ReadRoutes decides,
//     judged against the active site the pass left (readroutes.go);
//   - writes status through one patch helper (optimistic lock, skipped when
//     nothing changed), and records conditions (Progressing and
//     primaryFailingSince from topology.Progress and PrimaryFailing;
//     progress.go), Events and metrics.
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
// A reclone-site request (the annotation) is judged by
// topology.DecideReclone and an accepted one runs one phase per pass
// through the Env's Recloner, each phase persisted first in
// status.sites[].recovery (reclone.go, reclone_phases.go). The site is
// held like an administrator-fenced one while it runs, and its data is
// replaced only once its replication is stopped and another replica holds
// what it holds (reclone_wipe.go; docs/recovery.md).
//
// Before anything else a pass checks the authority against the generations
// the sidecars hold (authority_hold.go): a status that went back holds the
// group (AuthorityRegressed) until a person confirms. The status patcher
// never lowers the generation and abandons a write when another process
// moved the authority under it. Every step that makes a site writable asks
// mayMakeWritable first (leadership.go): a snapshot at most one poll
// interval old, the site's sidecar asking within two peerCheckIntervals,
// and leadership still held (authority.Leadership). A Pod
// gone confirms a fence, or counts a peer as serving nothing, only once its
// node's kubelet heartbeat advanced by the Pod's grace period plus one
// interval (podgone.go). A confirm-authority value that is not applied is
// removed with an AuthorityConfirmFailed Event (authority_confirm.go);
// confirmations carry bounded generations (topology.MaxConfirmGeneration).
// The loop marks the moment it first sees a site fail on the Registry's
// view sequence (failmark.go), so only reports about a later read count.
//
// Seams: Resolver maps (group, site) to a mysql.Config (default: the
// per-site Service, ServiceResolver); Opener opens it (mysql.Open); the
// Env's Router moves clients; its Clock tells the time and runs the timers
// (k8s.io/utils/clock; the simulation steps its own).
package grouploop
