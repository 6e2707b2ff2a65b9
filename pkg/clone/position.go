package clone

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// binlogInfoFiles name the file in which mariadb-backup records the binlog
// file, offset and GTID position a backup is consistent with: MariaDB 10.x
// writes the first, later releases the second.
var binlogInfoFiles = []string{"xtrabackup_binlog_info", "mariadb_backup_binlog_info"}

// gtidPosition is a MariaDB GTID position: domain-server-seqno, comma separated.
var gtidPosition = regexp.MustCompile(`^\d+-\d+-\d+(,\d+-\d+-\d+)*$`)

// readPosition returns the GTID position recorded in a backup folder: the
// third field of its binlog info, "" when the donor had written no GTID yet.
func readPosition(dir string) (string, error) {
	for _, name := range binlogInfoFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoPosition, err)
		}
		return ParseBinlogInfo(string(b))
	}
	return "", fmt.Errorf("%w: none of %v in %s (is the donor's binlog on?)", ErrNoPosition, binlogInfoFiles, dir)
}

// ParseBinlogInfo reads "<file>\t<offset>\t<gtid position>" (the position
// may be absent on a donor that never wrote a GTID) and returns the
// position with spaces removed.
func ParseBinlogInfo(s string) (string, error) {
	fields := strings.Fields(strings.TrimSpace(s))
	switch {
	case len(fields) < 2:
		return "", fmt.Errorf("%w: binlog info %q", ErrNoPosition, s)
	case len(fields) == 2:
		return "", nil
	}
	pos := strings.Join(fields[2:], "")
	if !gtidPosition.MatchString(pos) {
		return "", fmt.Errorf("%w: GTID position %q", ErrNoPosition, pos)
	}
	return pos, nil
}
