// Package clone seeds a site's mysqld with a physical copy of another
// site's data, so that a new or emptied replica does not have to replay
// the group's whole history from binlogs its donor may have purged.
//
// The donor side (Donor) runs `mariadb-backup --backup --stream=xbstream`
// next to the donor's mysqld and serves its output over HTTP: Donor is an
// http.Handler the sidecar mounts at PathClone on its mutual-TLS peer port,
// behind Authorize, which lets only the operator and the other sites of the
// same group through (401 without a certificate, 403 with someone else's,
// each refusal counted and logged). The stream is throttled to a byte rate
// (a token bucket; spec.recovery.maxCloneRate) and bounded by a deadline
// (spec.recovery.cloneTimeout). Its outcome travels in an HTTP trailer, so a
// stream cut short is never taken for a whole backup.
//
// The receiving side (Receiver) is a sequence of steps a controller can
// drive one at a time, each safe to repeat and resumable after a restart:
//   - Fetch pulls the stream into an empty staging folder (mbstream -x);
//   - Prepare applies the backup's redo log (mariadb-backup --prepare) and
//     records the GTID position the backup was taken at;
//   - Install moves the prepared files into mysqld's datadir, which must be
//     empty: a datadir holding anything is refused (ErrDataDirNotEmpty),
//     never overwritten;
//   - then, with mysqld started on the new datadir, pkg/mysql's
//     Cloner.JoinAfterClone sets gtid_slave_pos to that position and
//     replicates, read-only, with MASTER_USE_GTID=slave_pos;
//   - Reset removes the staging folder (also what a failed Fetch or Prepare
//     does by itself).
//
// Which site donates is decided in pkg/topology (CloneDonor). MySQL 8 seeds
// through its CLONE plugin instead (pkg/mysql's Cloner.CloneFrom).
package clone
