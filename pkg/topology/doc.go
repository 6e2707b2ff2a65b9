// Package topology owns observation and decision for a failover group: the
// per-site debouncer that turns raw probe results into a debounced SiteState,
// and Decide, the pure function that looks at every site at once and returns
// exactly one Decision with a reason. Every choice the operator makes about
// the topology is made here:
//   - whether an old primary is confirmed unable to write (ConfirmFence over
//     Evidence, LeaseDeadline; confirm.go);
//   - the never-answered rule (SiteView.NeverAnswered, ShownState) and the
//     administrator fence (SiteView.AdminFenced, Decision.AdminFence), both
//     honoured by Decide itself (neveranswered.go, adminfence.go);
//   - what the emergency failover sequence does with a decision: start,
//     retarget, promote now or once the old primary is confirmed
//     (Decision.Start, Retarget, Promote, PromoteOnceFenced, Promotes;
//     sequence.go);
//   - how long mysqld's lease fence is armed for before a site is made
//     writable (WritableLeaseFence; leasefence.go);
//   - the sites that follow a new primary after a failover (Followers);
//   - the site a new group starts on (BootstrapSite);
//   - each site's part in semi-sync replication (PlanSemiSync);
//   - the next step of the ordered update of the sites' Pods (PlanRollout;
//     rollout.go);
//   - the site a clone seeds another from (CloneDonor; donor.go);
//   - which sites serve reads through the read Services (ReadRoutes;
//     readroute.go);
//   - the cache's (Dragonfly's) part of a failover: the sync wait, the
//     promotion method, the takeover's outcome and the emergency budget
//     (JudgeCacheSync, CacheMethodFor, JudgeCacheTakeover,
//     EmergencyCachePlan; cache.go).
//
// It does no I/O, starts no goroutines and never reads the wall clock: every
// time it needs arrives as an argument (Debouncer.Observe's now, Input.Now,
// Evidence.Now). Gathering the facts belongs to pkg/controller; acting on a
// decision (fencing, promoting, persisting status) to pkg/failover and
// pkg/controller, which read the Decision and choose nothing.
//
// The safety rule every decision keeps: a site is only ever made writable when
// every other site is observed read-only or has been confirmed unable to accept
// writes (SiteView.FenceConfirmed), and extra writers are fenced before
// anything else is considered.
//
// The GTID half of that rule (history.go, reassert.go, candidate.go): a site
// made writable holds nothing outside the authority's history (Input.Promoted
// plus its writers' own transactions, minus every failover's lost set), can
// apply its relay log, and holds every eligible site's transactions when
// promoted, or every transaction of its own source id that another site holds
// when re-asserted.
package topology
