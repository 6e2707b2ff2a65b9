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
	// ErrReplayMismatch: after replaying an archived binlog, the restored
	// server is past what the file should have brought it to, or at the
	// same seq with another server's transaction.
	ErrReplayMismatch = errors.New("backup: replay reached another position than planned")
	// ErrArchiveRefused: archive records the restore could not use; a
	// plan made without them could miss the file that shows another
	// history, so none is made.
	ErrArchiveRefused = errors.New("backup: archive records refused")
	// ErrNoPosition: mariadb-backup's info names no binlog position.
	ErrNoPosition = errors.New("backup: no binlog position in the backup's info")
)
