package backup

import "errors"

// Sentinels, checked with errors.Is.
var (
	// ErrInvalid: a request or manifest is incomplete or malformed.
	ErrInvalid = errors.New("backup: invalid")
	// ErrNoManifest: no manifest under the backup's key: it does not
	// exist, or its upload never completed.
	ErrNoManifest = errors.New("backup: no manifest")
	// ErrCorrupt: the stored data differs from what its manifest says
	// (size or SHA-256).
	ErrCorrupt = errors.New("backup: data does not match its manifest")
	// ErrPositionMismatch: the restored data is consistent with another
	// GTID position than the manifest records.
	ErrPositionMismatch = errors.New("backup: restored position differs from the manifest")
	// ErrReplayShort: after replaying an archived binlog, the restored
	// server lacks a transaction the file gave it.
	ErrReplayShort = errors.New("backup: replay fell short")
	// ErrNoPosition: mariadb-backup's info names no binlog position.
	ErrNoPosition = errors.New("backup: no binlog position in the backup's info")
)
