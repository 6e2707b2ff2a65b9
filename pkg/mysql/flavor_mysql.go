package mysql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// mysqlDialect speaks MySQL 8.0.23+, 8.4 and 9.x: super_read_only,
// @@gtid_executed, WAIT_FOR_EXECUTED_GTID_SET, and CHANGE REPLICATION
// SOURCE TO ... SOURCE_AUTO_POSITION=1.
type mysqlDialect struct{ sharedVerbs }

const (
	mysqlStatusQuery = "SELECT @@version AS version, @@global.server_id AS server_id, " +
		"@@global.server_uuid AS server_uuid, @@global.read_only AS read_only, " +
		"@@global.super_read_only AS super_read_only, @@global.gtid_executed AS gtid_executed"
	// The semi-sync variables exist only with the plugin loaded, so they are
	// listed, not selected.
	mysqlSemiSyncVars   = "SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync_%'"
	mysqlSemiSyncStatus = "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync_%' OR Variable_name = 'Uptime'"
	mysqlReadOnlyQuery  = "SELECT @@global.read_only AS read_only, @@global.super_read_only AS super_read_only"
	mysqlExecutedQuery  = "SELECT @@global.gtid_executed AS gtid_executed"
	mysqlSubsetQuery    = "SELECT GTID_SUBSET(?, @@global.gtid_executed) AS reached"
	mysqlWaitQuery      = "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?) AS result"
	mysqlChangeSource   = "CHANGE REPLICATION SOURCE TO SOURCE_HOST=?, SOURCE_PORT=?, SOURCE_USER=?, " +
		"SOURCE_PASSWORD=?, SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, GET_SOURCE_PUBLIC_KEY=1"
	// mysqlSourceSSL is appended to mysqlChangeSource when the replica
	// connects with TLS: its own certificate (the source requires X509).
	mysqlSourceSSL = ", SOURCE_SSL=1, SOURCE_SSL_CA=?, SOURCE_SSL_CERT=?, SOURCE_SSL_KEY=?, " +
		"SOURCE_SSL_VERIFY_SERVER_CERT=?"
)

func (mysqlDialect) flavor() v1alpha1.Flavor { return v1alpha1.FlavorMySQL }

func (d mysqlDialect) status(ctx context.Context, ex executor) (Status, error) {
	r, err := queryOne(ctx, ex, mysqlStatusQuery)
	if err != nil {
		return Status{}, err
	}
	st := Status{
		Flavor: v1alpha1.FlavorMySQL, Version: r.str("version"),
		ServerID: uint32(r.integer("server_id")), ServerUUID: r.str("server_uuid"),
		ReadOnly: r.boolean("read_only"), SuperReadOnly: r.boolean("super_read_only"),
		GTIDExecuted: compactGTIDs(r.str("gtid_executed")),
	}
	if st.Executed, err = gtid.ParseSet(st.GTIDExecuted); err != nil {
		return Status{}, fmt.Errorf("gtid_executed: %w", err)
	}
	if st.Replica, err = d.replicaStatus(ctx, ex); err != nil {
		return Status{}, err
	}
	vars, err := ex.query(ctx, mysqlSemiSyncVars)
	if err != nil {
		return Status{}, fmt.Errorf("semi-sync variables: %w", err)
	}
	stat, err := ex.query(ctx, mysqlSemiSyncStatus)
	if err != nil {
		return Status{}, fmt.Errorf("semi-sync status: %w", err)
	}
	vm, status := variables(vars), variables(stat)
	st.SemiSync = semiSync(vm, status)
	st.SemiSync.Missing = mysqlSemiSyncMissing(vm)
	st.Uptime = uptime(status)
	return st, nil
}

// mysqlSemiSyncMissing names the semi-sync plugins whose variables the
// server does not list: each plugin brings its own, and the older
// semisync_master/slave plugins (rpl_semi_sync_master_*) are not what
// ConfigureSemiSync sets.
func mysqlSemiSyncMissing(vars map[string]string) string {
	var missing []string
	for _, p := range []struct{ plugin, variable string }{
		{"semisync_source", "rpl_semi_sync_source_enabled"},
		{"semisync_replica", "rpl_semi_sync_replica_enabled"},
	} {
		if _, ok := vars[p.variable]; !ok {
			missing = append(missing, fmt.Sprintf("plugin %s (no %s)", p.plugin, p.variable))
		}
	}
	return strings.Join(missing, ", ")
}

// setFenced: super_read_only=ON implies read_only=ON; turning it off leaves
// read_only on, so that needs its own statement.
func (d mysqlDialect) setFenced(ctx context.Context, ex executor, on bool) error {
	if on {
		return ex.exec(ctx, d.fenceStatement())
	}
	if err := ex.exec(ctx, "SET GLOBAL super_read_only = OFF"); err != nil {
		return err
	}
	return ex.exec(ctx, "SET GLOBAL read_only = OFF")
}

func (mysqlDialect) fenceStatement() string { return "SET GLOBAL super_read_only = ON" }

// liftDDLBarrier implements ddlBarrier: super_read_only refuses event DDL
// even to the operator's account; read_only, left on, still stops
// application accounts.
func (d mysqlDialect) liftDDLBarrier(ctx context.Context, ex executor) (string, error) {
	fenced, _, err := d.readOnly(ctx, ex)
	if err != nil {
		return "", fmt.Errorf("read super_read_only: %w", err)
	}
	if !fenced {
		return "", nil
	}
	if err := ex.exec(ctx, "SET GLOBAL super_read_only = OFF"); err != nil {
		return "", fmt.Errorf("lower super_read_only for the lease fence: %w", err)
	}
	return d.fenceStatement(), nil
}

func (mysqlDialect) readOnly(ctx context.Context, ex executor) (fenced, writable bool, err error) {
	r, err := queryOne(ctx, ex, mysqlReadOnlyQuery)
	if err != nil {
		return false, false, err
	}
	ro, sro := r.boolean("read_only"), r.boolean("super_read_only")
	return sro, !ro && !sro, nil
}

func (mysqlDialect) sessions(ctx context.Context, ex executor) ([]session, error) {
	return readSessions(ctx, ex, processlistQuery)
}

func (mysqlDialect) kill(ctx context.Context, ex executor, id uint64) error {
	return ex.exec(ctx, "KILL CONNECTION ?", id)
}

func (mysqlDialect) executed(ctx context.Context, ex executor) (gtid.Set, error) {
	r, err := queryOne(ctx, ex, mysqlExecutedQuery)
	if err != nil {
		return gtid.Set{}, err
	}
	set, err := gtid.ParseSet(compactGTIDs(r.str("gtid_executed")))
	if err != nil {
		return gtid.Set{}, fmt.Errorf("gtid_executed: %w", err)
	}
	return set, nil
}

func (mysqlDialect) waitTarget(set gtid.Set) (string, error) { return set.String(), nil }

func (mysqlDialect) reached(ctx context.Context, ex executor, target string) (bool, error) {
	r, err := queryOne(ctx, ex, mysqlSubsetQuery, target)
	if err != nil {
		return false, err
	}
	return r.boolean("reached"), nil
}

// waitFor: WAIT_FOR_EXECUTED_GTID_SET returns 0 when reached, 1 on timeout.
func (mysqlDialect) waitFor(ctx context.Context, ex executor, target string, timeout time.Duration) (bool, error) {
	r, err := queryOne(ctx, ex, mysqlWaitQuery, target, seconds(timeout))
	if err != nil {
		return false, err
	}
	return r.str("result") == "0", nil
}

func (mysqlDialect) stopReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "STOP REPLICA")
}

func (mysqlDialect) resetReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "RESET REPLICA ALL")
}

func (mysqlDialect) changeSource(ctx context.Context, ex executor, src Endpoint, c Credentials) error {
	if !c.TLS.Enabled() {
		return ex.exec(ctx, mysqlChangeSource, src.Host, src.Port, c.User, c.Password)
	}
	t := c.TLS
	return ex.exec(ctx, mysqlChangeSource+mysqlSourceSSL, src.Host, src.Port, c.User, c.Password,
		t.CAFile, t.CertFile, t.KeyFile, flag(t.VerifyServerCert))
}

func (mysqlDialect) startReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "START REPLICA")
}

// startReplicaUntil: the SQL thread stops once it applied every
// transaction of target; the IO thread goes on until STOP REPLICA.
func (mysqlDialect) startReplicaUntil(ctx context.Context, ex executor, target string) error {
	return ex.exec(ctx, "START REPLICA UNTIL SQL_AFTER_GTIDS = ?", target)
}

func (d mysqlDialect) errant(ctx context.Context, ex executor, source gtid.Set) (gtid.Set, error) {
	local, err := d.executed(ctx, ex)
	if err != nil {
		return gtid.Set{}, err
	}
	return gtid.Errant(local, source), nil
}
