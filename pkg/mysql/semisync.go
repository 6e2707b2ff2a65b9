package mysql

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Semi-synchronous replication: a commit on the source returns only once a
// replica has written it to its relay log (wait point AFTER_SYNC: the
// commit is durable on the source, and no other session sees it, before
// the acknowledgement), or once the timeout runs out, after which the
// source goes on asynchronously until a replica catches up.
//
// MariaDB 10.3+ has it built in, with one acknowledgement per commit.
// MySQL 8.0.26+ needs the semisync_source and semisync_replica plugins,
// loaded by the rendered my.cnf (plugin-load-add), and counts
// acknowledgements (rpl_semi_sync_source_wait_for_replica_count).
// A replica's setting takes effect when its IO thread connects, so a
// change of it restarts a running IO thread.

// SemiSyncSettings say how a server takes part in semi-sync replication.
type SemiSyncSettings struct {
	// Source: commits wait for acknowledgements (the primary).
	Source bool
	// Replica: this server acknowledges what it receives.
	Replica bool
	// Timeout is how long a commit waits before the source falls back to
	// asynchronous replication; at least a millisecond when Source is set.
	Timeout time.Duration
	// WaitCount is how many replicas acknowledge each commit (MySQL only;
	// MariaDB always waits for one). Zero means one.
	WaitCount int
	// Promoting: the server is about to be made writable (Promote). Its
	// replication, if any, is stopped before anything is set, so that no
	// transaction its applier commits from then on waits for an
	// acknowledgement, and its IO thread is not restarted when the replica
	// setting changes: a restart would reconnect it to the old primary,
	// which may be unreachable, right before Promote forgets it.
	Promoting bool
}

// semiSyncNames are one flavor's spellings of the settings.
type semiSyncNames struct {
	sourceEnabled, replicaEnabled, timeout, waitPoint, waitCount string
	stopIO, startIO                                              string
}

func semiSyncNamesFor(f v1alpha1.Flavor) semiSyncNames {
	if f == v1alpha1.FlavorMySQL {
		return semiSyncNames{sourceEnabled: "rpl_semi_sync_source_enabled", replicaEnabled: "rpl_semi_sync_replica_enabled",
			timeout: "rpl_semi_sync_source_timeout", waitPoint: "rpl_semi_sync_source_wait_point",
			waitCount: "rpl_semi_sync_source_wait_for_replica_count",
			stopIO:    "STOP REPLICA IO_THREAD", startIO: "START REPLICA IO_THREAD"}
	}
	return semiSyncNames{sourceEnabled: "rpl_semi_sync_master_enabled", replicaEnabled: "rpl_semi_sync_slave_enabled",
		timeout: "rpl_semi_sync_master_timeout", waitPoint: "rpl_semi_sync_master_wait_point",
		stopIO: "STOP SLAVE IO_THREAD", startIO: "START SLAVE IO_THREAD"}
}

// semiSyncVarsQuery reads the current settings (both flavors' names): the
// query MySQL's status reads them with.
const semiSyncVarsQuery = mysqlSemiSyncVars

// semiSyncStatements are the statements that take a server with the
// settings cur to s: only what differs, the source's timeout, wait point
// and count before it is switched on, and the IO thread restarted when the
// replica setting changes while it runs (ioRunning).
func semiSyncStatements(f v1alpha1.Flavor, cur map[string]string, s SemiSyncSettings, ioRunning bool) []string {
	n := semiSyncNamesFor(f)
	var out []string
	set := func(name, value string, quoted bool) {
		if cur[name] == value {
			return
		}
		if quoted {
			value = "'" + value + "'"
		}
		out = append(out, fmt.Sprintf("SET GLOBAL %s = %s", name, value))
	}
	onOff := func(b bool) string {
		if b {
			return "ON"
		}
		return "OFF"
	}
	if !s.Source {
		set(n.sourceEnabled, "OFF", false)
	} else {
		set(n.timeout, strconv.FormatInt(s.Timeout.Milliseconds(), 10), false)
		set(n.waitPoint, "AFTER_SYNC", true)
		if n.waitCount != "" {
			set(n.waitCount, strconv.Itoa(max(1, s.WaitCount)), false)
		}
		set(n.sourceEnabled, "ON", false)
	}
	if want := onOff(s.Replica); cur[n.replicaEnabled] != want {
		set(n.replicaEnabled, want, false)
		if ioRunning {
			out = append(out, n.stopIO, n.startIO)
		}
	}
	return out
}

// ConfigureSemiSync makes the server's semi-sync settings s. It sends
// nothing when they are already so. ErrSemiSyncUnavailable: the server has
// no semi-sync (MySQL without the plugins) or cannot do what s asks
// (MariaDB and more than one acknowledgement).
func (in *instance) ConfigureSemiSync(ctx context.Context, s SemiSyncSettings) error {
	if s.Source && s.Timeout < time.Millisecond {
		return wrap("configure semi-sync", in.addr, fmt.Errorf("%w: timeout %s", ErrInvalidConfig, s.Timeout))
	}
	return in.run(ctx, "configure semi-sync", 0, func(ctx context.Context, ex executor, d dialect) error {
		return applySemiSync(ctx, ex, d, s)
	})
}

// applySemiSync is ConfigureSemiSync on ex's session: Promote and
// SalvageFrom also run it under the topology lock.
func applySemiSync(ctx context.Context, ex executor, d dialect, s SemiSyncSettings) error {
	f := d.flavor()
	if f == v1alpha1.FlavorMariaDB && s.WaitCount > 1 {
		return fmt.Errorf("%w: MariaDB waits for one acknowledgement, not %d", ErrSemiSyncUnavailable, s.WaitCount)
	}
	if s.Source && s.Timeout < time.Millisecond {
		return fmt.Errorf("%w: timeout %s", ErrInvalidConfig, s.Timeout)
	}
	rows, err := ex.query(ctx, semiSyncVarsQuery)
	if err != nil {
		return fmt.Errorf("semi-sync variables: %w", err)
	}
	cur := variables(rows)
	if _, ok := cur[semiSyncNamesFor(f).sourceEnabled]; !ok {
		return fmt.Errorf("%w: no %s variable (plugin not loaded)", ErrSemiSyncUnavailable, semiSyncNamesFor(f).sourceEnabled)
	}
	rs, err := d.replicaStatus(ctx, ex)
	if err != nil {
		return err
	}
	io := rs != nil && rs.IORunning != ThreadNo
	if s.Promoting && rs != nil && (io || rs.SQLRunning) {
		if err := d.stopReplica(ctx, ex); err != nil {
			return fmt.Errorf("stop replica before promotion: %w", err)
		}
		io = false
	}
	for _, q := range semiSyncStatements(f, cur, s, io) {
		if err := ex.exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// SemiSyncer is what configures semi-sync: every Instance that Open
// returns is one.
type SemiSyncer interface {
	ConfigureSemiSync(ctx context.Context, s SemiSyncSettings) error
}

var _ SemiSyncer = (*instance)(nil)
