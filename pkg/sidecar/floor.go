package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FloorFile is the file, in Config.StateDir, where a sidecar keeps the
// highest generation it has seen. The state directory is the Pod's run
// directory (an emptyDir), which outlives a restart of the sidecar container,
// so a restarted process never adopts a view older than one its predecessor
// held (issue 13, path 1).
const FloorFile = "bloodraven-sidecar-generation"

// readFloor reads the floor in dir; 0 when there is none yet.
func readFloor(dir string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, FloorFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read floor: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("floor file %q: not a generation: %w", b, ErrMalformed)
	}
	return n, nil
}

// writeFloor replaces the floor in dir atomically.
func writeFloor(dir string, gen int64) error {
	return writeStateFile(dir, FloorFile, strconv.FormatInt(gen, 10)+"\n", true)
}

// writeStateFile replaces file name in dir atomically: a temporary file,
// renamed over the old one; with sync, the file and the directory are
// synced too.
func writeStateFile(dir, name, content string, sync bool) error {
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op after the rename
	_, err = tmp.WriteString(content)
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if !sync {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
