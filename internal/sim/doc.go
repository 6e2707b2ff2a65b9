// Package sim owns Bloodraven's deterministic simulation: a seeded, logical-time
// model of a failover group that drives the real pkg/topology code (the
// per-site Debouncer and Decide) through scheduled faults and checks the
// promises after every step.
//
// The model: N sites, each a Pod holding a sidecar and a mysqld with a GTID set
// (one source id per site), a read-only flag and replication with lag; a network
// whose links drop, slow down or partition a site; an operator that polls,
// debounces, decides and acts, and that can go down and come back with only its
// persisted status; clients that write to every writable mysqld.
//
// Invariants, checked after every step and at every unfence: never two writable
// sites; a planned failover's target holds every transaction of its fenced
// source; a site holding transactions the history discarded never replicates
// from the active site and is never made writable.
//
// Seams, so other packages plug in without touching the model: SidecarLoop (the
// sidecar fencing loop, pkg/sidecar), FenceConfirmer (the operator's rule that an
// old primary cannot write), EmergencySequencer and PlannedSequencer (pkg/failover)
// acting through SiteOps (pkg/mysql's domain verbs) on the persisted Status. The
// package ships its own model of each behind those interfaces (LeaseSidecar,
// DesignConfirmer, ModelEmergency, ModelPlanned), and adapters running the real
// pkg/sidecar Loop and pkg/topology ConfirmFence (UseRealCode).
//
// Breakage deliberately breaks one rule at a time; the tests use it to prove
// that each invariant can fail, so that clean runs mean something.
//
// TestScripts replays the scripts in testdata/scripts (datadriven, golden
// output): a world built by hand, faults fired by hand, steps and prints.
// docs/simulation.md describes the language and what each script proves.
//
// Nothing here reads the wall clock or starts a goroutine: a run is a function
// of its Config, and Config is a function of its seed, so a seed replays exactly.
package sim
