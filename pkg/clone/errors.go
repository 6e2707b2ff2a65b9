package clone

import "errors"

// Sentinel errors; functions wrap them with what failed. Test with errors.Is.
var (
	// ErrInvalidConfig: a Donor or Receiver cannot run as configured.
	ErrInvalidConfig = errors.New("clone: invalid configuration")
	// ErrBusy: the donor already streams a clone; one at a time.
	ErrBusy = errors.New("clone: donor busy with another clone")
	// ErrBackupFailed: mariadb-backup on the donor failed or was cut
	// short (including by the clone timeout).
	ErrBackupFailed = errors.New("clone: backup failed")
	// ErrStreamIncomplete: the receiver's stream ended without the donor's
	// confirmation that the backup completed.
	ErrStreamIncomplete = errors.New("clone: stream incomplete")
	// ErrRefused: the donor answered with an error status (401, 403, 503…).
	ErrRefused = errors.New("clone: donor refused")
	// ErrExtract: mbstream could not unpack the stream.
	ErrExtract = errors.New("clone: extract failed")
	// ErrPrepare: mariadb-backup --prepare failed.
	ErrPrepare = errors.New("clone: prepare failed")
	// ErrInstall: moving the prepared backup into the datadir failed.
	ErrInstall = errors.New("clone: install failed")
	// ErrDataDirNotEmpty: the datadir holds files; a clone never
	// overwrites data.
	ErrDataDirNotEmpty = errors.New("clone: datadir not empty")
	// ErrOutOfOrder: a step ran before the one it needs (Prepare before
	// Fetch, Install before Prepare, Position before Prepare).
	ErrOutOfOrder = errors.New("clone: step out of order")
	// ErrNoPosition: the backup recorded no usable GTID position.
	ErrNoPosition = errors.New("clone: no GTID position in backup")
)
