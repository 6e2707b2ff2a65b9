package reclone

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// MySQL is what a reclone needs of the site's mysqld. pkg/mysql's Instance
// with its Cloner satisfies it.
type MySQL interface {
	Status(ctx context.Context) (mysql.Status, error)
	Fence(ctx context.Context) error
	StopReplication(ctx context.Context) error
	SeedPosition(ctx context.Context, position string) error
}

// HistorySeeder is a MySQL that seeds a clone's binlog state with more
// than its position (pkg/mysql's Instance): the donor's history of other
// servers, so the clone's executed set matches the group's.
type HistorySeeder interface {
	SeedPositionWith(ctx context.Context, position, binlogState string) error
}

// Mysqld stops and starts the site's mysqld process. Start must start it
// without starting replication (skip-slave-start): the clone's position is
// set before it replicates. Both are called again after a restart, so
// stopping a stopped mysqld and starting a running one must succeed.
type Mysqld interface {
	Stop(ctx context.Context) error
	Start(ctx context.Context) error
}

// View is the topology view the sidecar holds: the active site and its
// generation; ok is false before it holds one.
type View func() (active string, generation int64, ok bool)

// Executor carries out reclone phases on its site (doc.go).
type Executor struct {
	Namespace, Group, Site string
	// Dir keeps the state file and the receiver's work folder.
	Dir string
	// DataDir is mysqld's datadir; PreserveRoot is where earlier data is
	// moved, on the same file system (a rename), never deleted.
	DataDir, PreserveRoot string
	DB                    MySQL
	Mysqld                Mysqld
	// Receiver returns a clone receiver from donor's /peer/clone (URL,
	// Client, DataDir and binaries set; its Dir is set here).
	Receiver func(donor string) (*clone.Receiver, error)
	// Donors are the sites a clone may be taken from (the group's others).
	Donors []string
	View   View
	// TLS is the site's certificate source: only the operator's
	// certificate is let through; nil refuses everyone.
	TLS pki.Source
	// MaxAttempts fails a phase after so many failed attempts in a row
	// (default 3); PhaseTimeout bounds one attempt (default 6h).
	MaxAttempts  int
	PhaseTimeout time.Duration
	// StartTimeout bounds the wait for a started mysqld to answer (default 2m).
	StartTimeout time.Duration
	Now          func() time.Time
	Logger       *slog.Logger

	mu      sync.Mutex
	running v1alpha1.RecoveryPhase // "" when no work runs
	done    chan struct{}          // closed when the running work ends
}

func (e *Executor) validate() error {
	if e.View == nil {
		return fmt.Errorf("%w: View is required", ErrInvalidConfig)
	}
	return e.Validate()
}

// Validate says whether the Executor has what it needs but its View (which
// a sidecar's Runner fills in) and a layout it can work in; Handler
// refuses to serve without them.
func (e *Executor) Validate() error {
	if e.Site == "" || e.Dir == "" || e.DataDir == "" || e.PreserveRoot == "" || e.DB == nil || e.Mysqld == nil ||
		e.Receiver == nil {
		return fmt.Errorf("%w: Site, Dir, DataDir, PreserveRoot, DB, Mysqld and Receiver are required", ErrInvalidConfig)
	}
	// Both would be moved aside with the datadir (docs/recovery.md).
	for name, p := range map[string]string{"PreserveRoot": e.PreserveRoot, "Dir": e.Dir} {
		if within(e.DataDir, p) {
			return fmt.Errorf("%w: %s %s is inside the datadir %s", ErrInvalidConfig, name, p, e.DataDir)
		}
	}
	// The receive folder is emptied at each new reclone: never keep data there.
	if within(e.receiveDir(), e.PreserveRoot) {
		return fmt.Errorf("%w: PreserveRoot %s is inside the receive folder %s, which is emptied", ErrInvalidConfig,
			e.PreserveRoot, e.receiveDir())
	}
	return nil
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, "../"))
}

// probeLayout checks, before mysqld is touched, that the datadir's
// entries can be renamed into the preservation root (the same file
// system): a file made in the datadir is renamed there and removed.
func (e *Executor) probeLayout() error {
	if err := os.MkdirAll(e.PreserveRoot, 0o700); err != nil {
		return fmt.Errorf("reclone: preservation root: %w", err)
	}
	f, err := os.CreateTemp(e.DataDir, ".bloodraven-probe-")
	if err != nil {
		return fmt.Errorf("reclone: probe the datadir: %w", err)
	}
	src := f.Name()
	_ = f.Close()
	dst := filepath.Join(e.PreserveRoot, filepath.Base(src))
	if err := os.Rename(src, dst); err != nil {
		_ = os.Remove(src)
		return fmt.Errorf("reclone: the datadir cannot be renamed into %s (another file system?): %w", e.PreserveRoot, err)
	}
	if err := os.Remove(dst); err != nil {
		return fmt.Errorf("reclone: remove the probe: %w", err)
	}
	return nil
}

func (e *Executor) log() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Executor) maxAttempts() int {
	if e.MaxAttempts > 0 {
		return e.MaxAttempts
	}
	return 3
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (e *Executor) receiveDir() string { return filepath.Join(e.Dir, "receive") }

// refusal is a request the Executor will not carry out.
type refusal struct {
	code   int
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refuse(code int, reason string, format string, args ...any) *refusal {
	return &refusal{code: code, reason: reason, err: fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)}
}

// Wait blocks until no work runs (tests, and a clean shutdown).
func (e *Executor) Wait() {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if done != nil {
		<-done
	}
}
