package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Instance is one MySQL or MariaDB server, spoken to in domain verbs. Every
// verb is bounded by its context's deadline and safe to repeat.
type Instance interface {
	// Addr is the address the instance was opened with.
	Addr() string
	// Status observes read-only state, GTIDs, replication and semi-sync.
	Status(ctx context.Context) (Status, error)
	// Fence stops application writes: it sets read_only (MySQL:
	// super_read_only), retrying while running writes hold it back, kills
	// application connections, and verifies (ErrFenceNotVerified).
	Fence(ctx context.Context) error
	// Unfence makes the server writable again and verifies it.
	Unfence(ctx context.Context) error
	// KillAppConnections kills application sessions (see Config.AppUsers and
	// SystemUsers) and returns how many it killed.
	KillAppConnections(ctx context.Context) (int, error)
	// WaitForGTID waits until the server has applied set; ErrTimeout after timeout.
	WaitForGTID(ctx context.Context, set gtid.Set, timeout time.Duration) error
	// DrainRelayLog waits until the SQL thread has applied everything the IO
	// thread received; ErrNotReplica without replication, ErrTimeout after timeout.
	DrainRelayLog(ctx context.Context, timeout time.Duration) error
	// Promote stops and forgets replication, captures the executed GTID set,
	// makes the server writable and verifies it. Relay logs not yet applied
	// are discarded: wait first (WaitForGTID or DrainRelayLog); what the IO
	// thread held received as replication stopped is returned, so that the
	// caller counts what the reset dropped (Promotion.Retrieved). It holds
	// the server's topology lock throughout (topolock.go), so that no
	// salvage starts into it meanwhile, and sets opts.SemiSync under it;
	// ErrTopologyLockBusy when the lock was not got within the lock wait
	// (nothing changed).
	Promote(ctx context.Context, opts PromoteOptions) (Promotion, error)
	// ReplicateFrom makes the server a read-only replica of source,
	// positioned by GTID. It does nothing when it already replicates
	// healthily from that source as that user.
	ReplicateFrom(ctx context.Context, source Endpoint, creds Credentials) error
	// SalvageFrom makes the server, which must be read-only already
	// (ErrSalvageTargetWritable, nothing changed, otherwise), replicate
	// from source (as ReplicateFrom would) with an UNTIL condition at
	// until, the source's executed set, waits until it holds until, and
	// stops replication, also when the wait fails or ctx is cancelled, on
	// a fresh connection; a second of ctx's deadline, which it needs, is
	// kept for that. It returns the executed set read after the stop
	// (empty when that read failed); ErrTimeout when until was not reached
	// in time. The caller checks the source is fenced. expect is the
	// server's executed set as the caller read it: under the topology
	// lock the server must still hold exactly that and still replicate
	// from source (ErrSalvageTargetMoved, nothing changed, otherwise).
	// part, when set, is the server's semi-sync part as the old primary's
	// replica: it is set under the lock, after those checks, so that a
	// salvage never reconfigures a server a promotion made writable.
	SalvageFrom(ctx context.Context, source Endpoint, creds Credentials, until, expect gtid.Set,
		part *SemiSyncSettings) (gtid.Set, error)
	// ApplierWork reads the replication applier's open transactions
	// (applier.go): a drain tells a busy applier from a stalled one by it.
	ApplierWork(ctx context.Context) (ApplierWork, error)
	// StopReplication stops the replication threads and keeps the configuration.
	StopReplication(ctx context.Context) error
	// ErrantAgainst returns the transactions this server has that source lacks.
	ErrantAgainst(ctx context.Context, source gtid.Set) (gtid.Set, error)
	// Shutdown asks the server to stop (the sidecar's fence escalation).
	Shutdown(ctx context.Context) error
	// HoldWrites takes the global read lock on a connection of its own,
	// stopping every account's writes until Release (the sidecar's hold).
	HoldWrites(ctx context.Context) (WriteHold, error)
	// ReloadTLS makes the server load its certificate files again, after a
	// rotation; open sessions and replication are not interrupted.
	ReloadTLS(ctx context.Context) error
	// ArmLeaseFence makes the server fence itself after the given time
	// (whole seconds, two or more) unless armed again first: the sidecar's
	// lease, kept by mysqld (leasefence.go). The sidecar arms it on a
	// writable server, the operator on a fenced one before it makes it
	// writable; ErrWritesHeld when a global read lock holds it back.
	ArmLeaseFence(ctx context.Context, after time.Duration) error
	// Close releases the connection pool.
	Close() error
}

type instance struct {
	cfg  Config
	addr string
	db   *sql.DB
	// session hands out an executor bound to one connection, and its release.
	session func(ctx context.Context) (executor, func(), error)

	mu sync.Mutex
	d  dialect // nil until detected when the flavor is auto
}

// Open prepares an Instance. It does not connect: the first verb does, within
// its context's deadline.
func Open(cfg Config) (Instance, error) {
	cfg = cfg.withDefaults()
	if cfg.Addr == "" && cfg.Socket == "" {
		return nil, fmt.Errorf("%w: neither Addr nor Socket set", ErrInvalidConfig)
	}
	in := &instance{cfg: cfg, addr: cfg.address()}
	if cfg.Flavor != v1alpha1.FlavorAuto {
		d, err := dialectFor(cfg.Flavor)
		if err != nil {
			return nil, err
		}
		in.d = d
	}
	mc, err := driverConfig(cfg)
	if err != nil {
		return nil, err
	}
	connector, err := gomysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	in.db = sql.OpenDB(connector)
	in.db.SetMaxOpenConns(cfg.MaxOpenConns)
	in.db.SetMaxIdleConns(cfg.MaxOpenConns)
	in.db.SetConnMaxIdleTime(time.Minute)
	in.session = in.conn
	return in, nil
}

func driverConfig(cfg Config) (*gomysql.Config, error) {
	mc := gomysql.NewConfig()
	mc.User, mc.Passwd = cfg.User, cfg.Password
	mc.Net, mc.Addr = "tcp", cfg.Addr
	if cfg.Socket != "" {
		mc.Net, mc.Addr = "unix", cfg.Socket
	} else if cfg.TLS != nil {
		tc, err := cfg.TLS.config()
		if err != nil {
			return nil, err
		}
		mc.TLS = tc
	}
	mc.Timeout, mc.ReadTimeout, mc.WriteTimeout = cfg.DialTimeout, cfg.ReadTimeout, cfg.WriteTimeout
	// Client-side interpolation: one round trip per statement, and
	// statements such as CHANGE MASTER and KILL that cannot be prepared.
	mc.InterpolateParams = true
	return mc, nil
}

func (in *instance) conn(ctx context.Context) (executor, func(), error) {
	c, err := in.db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	drop := new(atomic.Bool)
	return sqlExecutor{conn: c, drop: drop}, func() {
		if drop.Load() {
			// ErrBadConn from Raw: database/sql closes the connection
			// instead of pooling it.
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = c.Close()
	}, nil
}

func (in *instance) Addr() string { return in.addr }

func (in *instance) Close() error { return in.db.Close() }

// run gives f one connection and the dialect, within ctx (or, when ctx has
// no deadline, within ReadTimeout plus extra), and wraps its error with verb.
func (in *instance) run(ctx context.Context, verb string, extra time.Duration,
	f func(context.Context, executor, dialect) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.cfg.ReadTimeout+extra)
		defer cancel()
	}
	ex, release, err := in.session(ctx)
	if err != nil {
		return wrap(verb, in.addr, err)
	}
	defer release()
	d, err := in.dialect(ctx, ex)
	if err != nil {
		return wrap(verb, in.addr, err)
	}
	return wrap(verb, in.addr, f(ctx, ex, d))
}

func (in *instance) dialect(ctx context.Context, ex executor) (dialect, error) {
	in.mu.Lock()
	d := in.d
	in.mu.Unlock()
	if d != nil {
		return d, nil
	}
	d, err := detectDialect(ctx, ex)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	in.d = d
	in.mu.Unlock()
	return d, nil
}
