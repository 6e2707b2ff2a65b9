// Package backup takes physical base backups of a site's mysqld into an
// S3-compatible object store and restores them into an empty datadir.
//
// A base backup is two objects under <namespace>/<group>/base/<id>/ (Keys):
//   - data-<random>.xbstream.zst, one per attempt: the `mariadb-backup
//     --stream=xbstream` output of the source's mysqld (the clone donor's
//     stream, pkg/clone), compressed with zstd on its way up;
//   - manifest.json: what the backup is (Manifest): who, when, the GTID
//     position and binlog coordinates it is consistent with, the data
//     object's key, size and SHA-256.
//
// The manifest is written last, so a backup exists only once it is whole:
// an upload cut short leaves no manifest, and Restore refuses a backup
// without one. Restore streams the object back through the checksum and
// the decompressor into pkg/clone's Receiver (its Source hook), which
// unpacks, prepares and installs the files; a stream whose size or
// checksum differs from the manifest's fails the fetch, and a prepared
// backup whose GTID position is not the manifest's fails the restore. A
// restore never starts a mysqld on data it could not verify.
//
// Archiver copies a site's sealed binlogs next to the base backups, each
// with a record of its GTIDs and times read from the binary file itself
// (binlogfile.go). PlanRestore chooses, through topology.PlanPITR, the
// archived files that carry a base backup to a target time, across sites
// and failovers, and refuses a target outside the archive, a gap or an
// ambiguous archive before anything is restored; Replay applies them
// with mariadb-binlog and checks, file by file, that the server reached
// what the binary file says it should. Scheduling and retention are not here yet (docs/backups.md).
package backup
