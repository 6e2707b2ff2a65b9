// Package reclone is the site's half of a reclone (docs/recovery.md): the
// endpoint a sidecar serves on its peer port, POST PathReclone, through
// which the operator carries out a reclone's phases on the site whose data
// is to be replaced by a clone of a donor's.
//
// Only the operator's certificate is let through (401 without a
// certificate, 403 with anyone else's, and 403 for everyone without TLS).
// A request names its reclone (Request.ID), the phase, the donor and the
// topology generation the operator holds. The Executor refuses, with
// nothing touched, a malformed request, a generation older than the view
// the sidecar holds (a deposed operator), a site the view names active, a
// site whose mysqld is writable when its data is about to be replaced,
// and a second reclone while one runs. Each refusal is logged and counted
// (MetricRefusals).
//
// The phases, each idempotent and resumable after a restart of either side
// (the progress is kept in a state file in the Executor's Dir):
//   - PreservingData: fence mysqld (read-only), stop its replication, and
//     record the diverged GTID set in a preservation folder named
//     <group>-<site>-diverged-<time> under PreserveRoot. mysqld keeps
//     running: its data stays whole until the operator has proved another
//     site holds everything it may have acknowledged.
//   - Cloning: fetch and prepare the donor's backup (pkg/clone's Receiver)
//     while mysqld still runs, then stop mysqld, move the whole datadir
//     into the preservation folder (never deleted by Bloodraven), install
//     the backup into the emptied datadir, start mysqld, and seed its
//     replication position (gtid_slave_pos) at the backup's GTID position,
//     read-only, with any replication the copy carried forgotten.
//   - CatchingUp: report the seeded position (seeding it again if a
//     restart came between); the operator then points the site's
//     replication at the active site, as for any replica.
//
// Work runs in the background, one phase at a time; a call starts it or
// reports how it stands, and returns at once.
package reclone
