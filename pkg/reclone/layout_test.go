package reclone_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// TestALayoutInsideTheDataDirIsRefused: a preservation root or state
// folder inside the datadir would be moved aside with it (a rename of a
// folder into its own subfolder fails only after mysqld was stopped), and
// a preservation root inside the receive folder would be emptied with it:
// the Executor refuses to serve at all.
func TestALayoutInsideTheDataDirIsRefused(t *testing.T) {
	cases := []struct {
		name string
		set  func(e *reclone.Executor)
	}{
		{"preservation root inside", func(e *reclone.Executor) { e.PreserveRoot = filepath.Join(e.DataDir, ".preserved") }},
		{"preservation root is the datadir", func(e *reclone.Executor) { e.PreserveRoot = e.DataDir + "/" }},
		{"state folder inside", func(e *reclone.Executor) { e.Dir = filepath.Join(e.DataDir, "reclone") }},
		// The receive folder is emptied at each new reclone and by the
		// receiver's reset: preserved data kept there would be deleted.
		{"preservation root inside the receive folder", func(e *reclone.Executor) {
			e.PreserveRoot = filepath.Join(e.Dir, "receive", "kept")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _, _ := unitExecutor(t, nil)
			c.set(e)
			if _, err := e.Handler(nil); !errors.Is(err, reclone.ErrInvalidConfig) {
				t.Fatalf("%v, want ErrInvalidConfig", err)
			}
		})
	}
}

// TestAPreserveRootOnAnotherFileSystemIsRefused: the datadir cannot be
// renamed into a preservation root on another file system (/dev/shm is a
// tmpfs apart from the temporary folder here): PreservingData is refused
// before mysqld is fenced or stopped, and the datadir stays whole.
func TestAPreserveRootOnAnotherFileSystemIsRefused(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "reclone-preserve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(other) })
	c, m, _, data, e := siteBed(t, func(e *reclone.Executor) { e.PreserveRoot = other })
	phases(t, c, e, recloneB, v1alpha1.RecoveryRequested)
	q := recloneB
	q.Phase = v1alpha1.RecoveryPreservingData
	if _, err := c.Do(t.Context(), "shop", "orders", "pdx", q); err == nil {
		t.Fatal("PreservingData into another file system accepted")
	}
	e.Wait()
	if m.stops != 0 {
		t.Fatalf("mysqld stopped %d times", m.stops)
	}
	if _, err := os.Stat(filepath.Join(data, "app", "errant.frm")); err != nil {
		t.Fatalf("the datadir was touched: %v", err)
	}
	entries, _ := os.ReadDir(data)
	if len(entries) != 1 {
		t.Fatalf("the datadir holds %d entries, want 1 (the probe left something)", len(entries))
	}
}
