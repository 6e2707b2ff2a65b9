package mysql

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// mariadbDialect speaks MariaDB 10.11+: read_only (with READ_ONLY ADMIN
// exempt), @@gtid_binlog_state/_pos and @@gtid_slave_pos, MASTER_GTID_WAIT,
// and CHANGE MASTER TO ... MASTER_USE_GTID.
type mariadbDialect struct{ sharedVerbs }

const (
	mariadbStatusQuery = "SELECT @@version AS version, @@global.server_id AS server_id, " +
		"@@global.read_only AS read_only, @@global.gtid_binlog_state AS gtid_binlog_state, " +
		"@@global.gtid_binlog_pos AS gtid_binlog_pos, @@global.gtid_slave_pos AS gtid_slave_pos, " +
		"@@global.gtid_current_pos AS gtid_current_pos, " +
		"@@global.rpl_semi_sync_master_enabled AS rpl_semi_sync_master_enabled, " +
		"@@global.rpl_semi_sync_slave_enabled AS rpl_semi_sync_slave_enabled"
	mariadbSemiSyncStatus = "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync_master_%' OR Variable_name = 'Uptime'"
	mariadbReadOnlyQuery  = "SELECT @@global.read_only AS read_only"
	mariadbReachedQuery   = "SELECT @@global.gtid_binlog_state AS gtid_binlog_state, @@global.gtid_slave_pos AS gtid_slave_pos"
	mariadbWaitQuery      = "SELECT MASTER_GTID_WAIT(?, ?) AS result"
	mariadbStateQuery     = "SELECT @@global.gtid_binlog_state AS gtid_binlog_state"
	// current_pos: a former primary resumes from its own last write, and a
	// server with writes its new source lacks is refused with 1236
	// ("slave has diverged") instead of silently skipping them.
	mariadbChangeMaster = "CHANGE MASTER TO MASTER_HOST=?, MASTER_PORT=?, MASTER_USER=?, " +
		"MASTER_PASSWORD=?, MASTER_USE_GTID=current_pos, MASTER_CONNECT_RETRY=1"
	// mariadbMasterSSL is appended to mariadbChangeMaster when the replica
	// connects with TLS: its own certificate (the source requires X509).
	mariadbMasterSSL = ", MASTER_SSL=1, MASTER_SSL_CA=?, MASTER_SSL_CERT=?, MASTER_SSL_KEY=?, " +
		"MASTER_SSL_VERIFY_SERVER_CERT=?"
)

func (mariadbDialect) flavor() v1alpha1.Flavor { return v1alpha1.FlavorMariaDB }

func (d mariadbDialect) status(ctx context.Context, ex executor) (Status, error) {
	r, err := queryOne(ctx, ex, mariadbStatusQuery)
	if err != nil {
		return Status{}, err
	}
	st := Status{
		Flavor: v1alpha1.FlavorMariaDB, Version: r.str("version"),
		ServerID: uint32(r.integer("server_id")), ReadOnly: r.boolean("read_only"),
		GTIDBinlogState: r.str("gtid_binlog_state"), GTIDBinlogPos: r.str("gtid_binlog_pos"),
		GTIDSlavePos: r.str("gtid_slave_pos"), GTIDCurrentPos: r.str("gtid_current_pos"),
	}
	state, err := gtid.ParseBinlogState(st.GTIDBinlogState)
	if err != nil {
		return Status{}, fmt.Errorf("gtid_binlog_state: %w", err)
	}
	st.Executed = state.Set()
	if st.Replica, err = d.replicaStatus(ctx, ex); err != nil {
		return Status{}, err
	}
	rows, err := ex.query(ctx, mariadbSemiSyncStatus)
	if err != nil {
		return Status{}, fmt.Errorf("semi-sync status: %w", err)
	}
	status := variables(rows)
	st.SemiSync = semiSync(map[string]string{
		"rpl_semi_sync_master_enabled": r.str("rpl_semi_sync_master_enabled"),
		"rpl_semi_sync_slave_enabled":  r.str("rpl_semi_sync_slave_enabled"),
	}, status)
	st.Uptime = uptime(status)
	return st, nil
}

func (d mariadbDialect) setFenced(ctx context.Context, ex executor, on bool) error {
	if on {
		return ex.exec(ctx, d.fenceStatement())
	}
	return ex.exec(ctx, "SET GLOBAL read_only = OFF")
}

func (mariadbDialect) fenceStatement() string { return "SET GLOBAL read_only = ON" }

func (mariadbDialect) readOnly(ctx context.Context, ex executor) (fenced, writable bool, err error) {
	r, err := queryOne(ctx, ex, mariadbReadOnlyQuery)
	if err != nil {
		return false, false, err
	}
	ro := r.boolean("read_only")
	return ro, !ro, nil
}

func (mariadbDialect) sessions(ctx context.Context, ex executor) ([]session, error) {
	return readSessions(ctx, ex, processlistQuery)
}

func (mariadbDialect) kill(ctx context.Context, ex executor, id uint64) error {
	return ex.exec(ctx, "KILL CONNECTION ?", id)
}

func (mariadbDialect) executed(ctx context.Context, ex executor) (gtid.Set, error) {
	state, err := mariadbState(ctx, ex)
	if err != nil {
		return gtid.Set{}, err
	}
	return state.Set(), nil
}

func mariadbState(ctx context.Context, ex executor) (gtid.BinlogState, error) {
	r, err := queryOne(ctx, ex, mariadbStateQuery)
	if err != nil {
		return nil, err
	}
	state, err := gtid.ParseBinlogState(r.str("gtid_binlog_state"))
	if err != nil {
		return nil, fmt.Errorf("gtid_binlog_state: %w", err)
	}
	return state, nil
}

func (mariadbDialect) waitTarget(set gtid.Set) (string, error) {
	pos, err := gtid.PosFromSet(set)
	if err != nil {
		return "", err
	}
	return pos.String(), nil
}

// reached checks per domain what MASTER_GTID_WAIT cannot see: a server's
// own writes are in its binlog state, not in gtid_slave_pos. A domain counts
// as reached when gtid_slave_pos is at or past the target's seq (as
// MASTER_GTID_WAIT judges), or when the binlog state holds the target's own
// server at or past it; a different server's GTID at the same seq (an
// errant write) does not count.
func (mariadbDialect) reached(ctx context.Context, ex executor, target string) (bool, error) {
	want, err := gtid.ParsePos(target)
	if err != nil {
		return false, err
	}
	r, err := queryOne(ctx, ex, mariadbReachedQuery)
	if err != nil {
		return false, err
	}
	state, err1 := gtid.ParseBinlogState(r.str("gtid_binlog_state"))
	slave, err2 := gtid.ParsePos(r.str("gtid_slave_pos"))
	if err1 != nil || err2 != nil {
		return false, fmt.Errorf("gtid positions: %w", firstErr(err1, err2))
	}
	for _, t := range want {
		if s, ok := slave.Domain(t.Domain); ok && s.Seq >= t.Seq {
			continue
		}
		if !slices.ContainsFunc(state, func(g gtid.GTID) bool {
			return g.Domain == t.Domain && g.Server == t.Server && g.Seq >= t.Seq
		}) {
			return false, nil
		}
	}
	return true, nil
}

func (mariadbDialect) waitFor(ctx context.Context, ex executor, target string, timeout time.Duration) (bool, error) {
	r, err := queryOne(ctx, ex, mariadbWaitQuery, target, seconds(timeout))
	if err != nil {
		return false, err
	}
	return r.str("result") == "0", nil
}

func (mariadbDialect) stopReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "STOP REPLICA")
}

func (mariadbDialect) resetReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "RESET REPLICA ALL")
}

func (mariadbDialect) changeSource(ctx context.Context, ex executor, src Endpoint, c Credentials) error {
	if !c.TLS.Enabled() {
		return ex.exec(ctx, mariadbChangeMaster, src.Host, src.Port, c.User, c.Password)
	}
	t := c.TLS
	return ex.exec(ctx, mariadbChangeMaster+mariadbMasterSSL, src.Host, src.Port, c.User, c.Password,
		t.CAFile, t.CertFile, t.KeyFile, flag(t.VerifyServerCert))
}

func (mariadbDialect) startReplica(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "START REPLICA")
}

// startReplicaUntil: with a GTID position both threads stop once every
// domain of target is reached, and only target's domains are applied.
func (mariadbDialect) startReplicaUntil(ctx context.Context, ex executor, target string) error {
	return ex.exec(ctx, "START REPLICA UNTIL master_gtid_pos = ?", target)
}

// errant compares binlog states (gtid.BinlogErrant), which, unlike a plain
// set difference, does not misreport after a failover and failback.
func (mariadbDialect) errant(ctx context.Context, ex executor, source gtid.Set) (gtid.Set, error) {
	local, err := mariadbState(ctx, ex)
	if err != nil {
		return gtid.Set{}, err
	}
	src, err := binlogStateFromSet(source)
	if err != nil {
		return gtid.Set{}, err
	}
	return gtid.BinlogErrant(local, src), nil
}

// binlogStateFromSet rebuilds a binlog state (last seq per domain-server)
// from a Set that BinlogState.Set produced; pkg/gtid has no inverse.
func binlogStateFromSet(s gtid.Set) (gtid.BinlogState, error) {
	var state gtid.BinlogState
	for _, src := range s.Sources() {
		d, sv, ok := strings.Cut(src, "-")
		domain, err1 := strconv.ParseUint(d, 10, 32)
		server, err2 := strconv.ParseUint(sv, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: source id %q", gtid.ErrNotMariaDB, src)
		}
		ivs := s.Intervals(src)
		state = append(state, gtid.GTID{Domain: uint32(domain), Server: uint32(server), Seq: ivs[len(ivs)-1].End})
	}
	return state, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
