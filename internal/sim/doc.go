// Package sim owns Bloodraven's deterministic simulation: a seeded,
// logical-time world of one failover group that runs the real operator and
// the real sidecar through scheduled faults and checks the promises after
// every step.
//
// What is real: the operator's per-group loop (pkg/grouploop, stepped
// through controller.GroupStepper on a fake clock) with pkg/topology's
// decision and pkg/failover's sequences, pkg/authority's Registry and
// GET /active-site handler (realop*.go), and pkg/sidecar's Runner in
// every site's sidecar, stepped through sidecar.Stepper (sidecar.go). What
// is simulated: N sites, each a Pod holding a sidecar and a mysqld with a
// GTID set (one source id per site), a read-only flag, replication with
// lag and the sidecar's write hold, reached by the operator as a pkg/mysql
// Instance (realop_db.go) and by its sidecar over the Pod's socket
// (sidedb.go); each sidecar's clock (sideclock.go); the API server (controller-runtime's
// fake client); Pods, Nodes and kubelets; leader election; a network whose
// links drop, slow down, lose one direction or partition a site; clients
// that write to every writable mysqld.
//
// Invariants, checked after every step and at every unfence: never two
// writable sites; a planned failover's target holds every transaction of
// its fenced source; a site holding transactions the history discarded
// never replicates from the active site and is never made writable;
// forged reports are refused; the generation never goes back; no GTID is
// reused; the freshest eligible site is promoted; loss is reported exactly.
//
// Config.Sidecar and Config.Instance let tests put a broken sidecar or a
// lying mysqld in the world, to prove that each invariant can fail, so
// that clean runs mean something (TestCheckerCatchesBrokenRules). The
// product's packages carry no such switch.
//
// TestScripts replays the scripts in testdata/scripts (datadriven, golden
// output): a world built by hand, faults fired by hand, steps and prints.
// docs/simulation.md describes the language and what each script proves.
//
// Nothing here reads the wall clock (the sidecars' boot ids are random,
// and only ever compared), and what runs in goroutines (the loop's
// parallel probes) only reads: a run is a function of its Config,
// and Config is a function of its seed, so a seed replays exactly.
package sim
