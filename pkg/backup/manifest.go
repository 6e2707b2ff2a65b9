package backup

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/pkg/objstore"
)

// ManifestVersion is the format of the manifests this package writes.
const ManifestVersion = 1

// Manifest describes one base backup (doc.go).
type Manifest struct {
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Site      string `json:"site"`
	// Method is how the data was taken: "mariadb-backup".
	Method    string    `json:"method"`
	StartTime time.Time `json:"startTime"`
	StopTime  time.Time `json:"stopTime"`
	// ConsistentTime is mariadb-backup's own end time (xtrabackup_info's
	// end_time, in the source's clock, whole seconds): the data is
	// consistent with a point at or before it. StartTime and StopTime are
	// the taker's clock.
	ConsistentTime time.Time `json:"consistentTime"`
	// GTIDPosition is the MariaDB GTID position the data is consistent
	// with ("" when the source had written no GTID yet).
	GTIDPosition string `json:"gtidPosition"`
	BinlogFile   string `json:"binlogFile"`
	BinlogOffset int64  `json:"binlogOffset"`
	// Data is the key of the data object, relative to the store's prefix.
	Data        string `json:"data"`
	Compression string `json:"compression"`
	// Size and SHA256 are the stored (compressed) bytes' count and hash;
	// RawSize the xbstream's size before compression.
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	RawSize int64  `json:"rawSize"`
}

// Keys are where a base backup's objects live. Its data object's key is
// each attempt's own (newDataKey), named by the manifest.
type Keys struct{ Dir, Manifest string }

// KeysFor names the objects of backup id of namespace's group.
func KeysFor(namespace, group, id string) Keys {
	dir := objstore.Join(namespace, group, "base", id)
	return Keys{Dir: dir, Manifest: objstore.Join(dir, "manifest.json")}
}

// newDataKey names one attempt's data object under the backup's folder:
// two attempts at one id never write, or remove, each other's.
func (k Keys) newDataKey() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("data key: %w", err)
	}
	return objstore.Join(k.Dir, "data-"+hex.EncodeToString(b[:])+".xbstream.zst"), nil
}

// ownsData tells whether key is a data object's key under this backup.
func (k Keys) ownsData(key string) bool {
	rest, ok := strings.CutPrefix(key, k.Dir+"/")
	return ok && dataName.MatchString(rest)
}

var dataName = regexp.MustCompile(`^data-[0-9a-f]{16}\.xbstream\.zst$`)

// validName is a group, site or backup id: DNS-label-like, so keys stay plain.
var validName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)

// Validate checks a manifest read back from the store.
func (m Manifest) Validate() error {
	switch {
	case m.Version != ManifestVersion:
		return fmt.Errorf("%w: manifest version %d, want %d", ErrInvalid, m.Version, ManifestVersion)
	case !validName.MatchString(m.Namespace) || !validName.MatchString(m.Group) || !validName.MatchString(m.ID):
		return fmt.Errorf("%w: manifest namespace %q group %q id %q", ErrInvalid, m.Namespace, m.Group, m.ID)
	case !KeysFor(m.Namespace, m.Group, m.ID).ownsData(m.Data):
		return fmt.Errorf("%w: manifest data key %q is not its backup's", ErrInvalid, m.Data)
	case m.Compression != "zstd":
		return fmt.Errorf("%w: compression %q", ErrInvalid, m.Compression)
	case m.Size <= 0 || len(m.SHA256) != 64:
		return fmt.Errorf("%w: manifest size %d sha256 %q", ErrInvalid, m.Size, m.SHA256)
	case m.StopTime.Before(m.StartTime):
		return fmt.Errorf("%w: stopped %s before it started %s", ErrInvalid, m.StopTime, m.StartTime)
	}
	return nil
}

// decodeManifest parses and validates a manifest.
func decodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: manifest: %w", ErrInvalid, err)
	}
	return m, m.Validate()
}

// binlogPos is xtrabackup_info's binlog_pos line as MariaDB's
// mariadb-backup writes it.
var binlogPos = regexp.MustCompile(`^binlog_pos = filename '([^']*)', position '(\d+)'(?:, GTID of the last change '([^']*)')?`)

// Coordinates is where in the source's binlog a backup is consistent.
type Coordinates struct {
	File     string
	Offset   int64
	Position string // the GTID position
	// EndTime is end_time, read as UTC (the donor runs mariadb-backup
	// with TZ=UTC); zero when the info has none.
	EndTime time.Time
}

// endTime is xtrabackup_info's end_time line.
var endTime = regexp.MustCompile(`^end_time = (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$`)

// ParseInfo reads the binlog coordinates and end time from
// xtrabackup_info's text.
func ParseInfo(text string) (Coordinates, error) {
	var c Coordinates
	found := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if m := endTime.FindStringSubmatch(line); m != nil {
			t, err := time.ParseInLocation(time.DateTime, m[1], time.UTC)
			if err != nil {
				return Coordinates{}, fmt.Errorf("%w: end_time %q: %w", ErrNoPosition, m[1], err)
			}
			c.EndTime = t
		}
		m := binlogPos.FindStringSubmatch(line)
		if m == nil || found {
			continue
		}
		off, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			return Coordinates{}, fmt.Errorf("%w: offset %q: %w", ErrNoPosition, m[2], err)
		}
		c.File, c.Offset, c.Position, found = m[1], off, strings.ReplaceAll(m[3], " ", ""), true
	}
	if !found {
		return Coordinates{}, ErrNoPosition
	}
	return c, nil
}

// WindowFrom is the earliest point-in-time target the backup can serve:
// its consistent time, or for a manifest without one, its stop time.
func (m Manifest) WindowFrom() time.Time {
	if m.ConsistentTime.IsZero() {
		return m.StopTime
	}
	return m.ConsistentTime
}

// readInfo reads the coordinates from the xtrabackup_info in dir.
func readInfo(dir string) (Coordinates, error) {
	b, err := os.ReadFile(filepath.Join(dir, "xtrabackup_info"))
	if err != nil {
		return Coordinates{}, fmt.Errorf("%w: %w", ErrNoPosition, err)
	}
	return ParseInfo(string(b))
}
