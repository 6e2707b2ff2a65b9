package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// dialect is one flavor's SQL. The verbs in verbs*.go are written once on
// top of it; flavor_mysql.go and flavor_mariadb.go implement it.
type dialect interface {
	flavor() v1alpha1.Flavor
	status(ctx context.Context, ex executor) (Status, error)
	// replicaStatus is nil when no replication is configured.
	replicaStatus(ctx context.Context, ex executor) (*ReplicaStatus, error)
	setLockWaitTimeout(ctx context.Context, ex executor, seconds int) error
	// setFenced turns the application write barrier on or off.
	setFenced(ctx context.Context, ex executor, on bool) error
	// fenceStatement is the statement that raises the barrier.
	fenceStatement() string
	// readOnly reads back whether the barrier is up and whether the server is writable.
	readOnly(ctx context.Context, ex executor) (fenced, writable bool, err error)
	sessions(ctx context.Context, ex executor) ([]session, error)
	kill(ctx context.Context, ex executor, id uint64) error
	executed(ctx context.Context, ex executor) (gtid.Set, error)
	// waitTarget turns a set into what reached and waitFor take.
	waitTarget(set gtid.Set) (string, error)
	reached(ctx context.Context, ex executor, target string) (bool, error)
	// waitFor blocks up to timeout; false means it timed out.
	waitFor(ctx context.Context, ex executor, target string, timeout time.Duration) (bool, error)
	stopReplica(ctx context.Context, ex executor) error
	resetReplica(ctx context.Context, ex executor) error
	// changeSource points replication at src, with TLS when creds.TLS is set.
	changeSource(ctx context.Context, ex executor, src Endpoint, creds Credentials) error
	// reloadTLS makes the server read its certificate files again.
	reloadTLS(ctx context.Context, ex executor) error
	startReplica(ctx context.Context, ex executor) error
	// startReplicaUntil starts replication that stops once target (what
	// waitTarget made of a set) is applied: MariaDB's master_gtid_pos,
	// MySQL's SQL_AFTER_GTIDS.
	startReplicaUntil(ctx context.Context, ex executor, target string) error
	errant(ctx context.Context, ex executor, source gtid.Set) (gtid.Set, error)
}

func dialectFor(f v1alpha1.Flavor) (dialect, error) {
	switch f {
	case v1alpha1.FlavorMySQL:
		return mysqlDialect{}, nil
	case v1alpha1.FlavorMariaDB:
		return mariadbDialect{}, nil
	}
	return nil, fmt.Errorf("%w: flavor %q", ErrInvalidConfig, f)
}

// versionQuery is sent once per Instance when the flavor is auto.
const versionQuery = "SELECT @@version AS version"

func detectDialect(ctx context.Context, ex executor) (dialect, error) {
	r, err := queryOne(ctx, ex, versionQuery)
	if err != nil {
		return nil, fmt.Errorf("detect flavor: %w", err)
	}
	f, err := detectFlavor(r.str("version"))
	if err != nil {
		return nil, err
	}
	return dialectFor(f)
}

// detectFlavor reads @@version: MariaDB says so ("10.11.6-MariaDB-0+deb12u1"),
// everything else is MySQL. Versions below the supported ones are refused.
func detectFlavor(version string) (v1alpha1.Flavor, error) {
	major, minor, patch, ok := parseVersion(version)
	if !ok {
		return "", fmt.Errorf("%w: cannot read version %q", ErrUnsupportedVersion, version)
	}
	v := major*1_000_000 + minor*1_000 + patch
	if strings.Contains(strings.ToLower(version), "mariadb") {
		if v < 10_011_000 {
			return "", fmt.Errorf("%w: MariaDB %q (need 10.11+)", ErrUnsupportedVersion, version)
		}
		return v1alpha1.FlavorMariaDB, nil
	}
	if v < 8_000_023 {
		return "", fmt.Errorf("%w: MySQL %q (need 8.0.23+)", ErrUnsupportedVersion, version)
	}
	return v1alpha1.FlavorMySQL, nil
}

func parseVersion(v string) (major, minor, patch int, ok bool) {
	end := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if end >= 0 {
		v = v[:end]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return 0, 0, 0, false
	}
	var n [3]int
	for i := range n {
		x, err := strconv.Atoi(parts[i])
		if err != nil {
			return 0, 0, 0, false
		}
		n[i] = x
	}
	return n[0], n[1], n[2], true
}

// session is one processlist entry.
type session struct {
	ID            uint64
	User, Command string
}

// processlistQuery lists every other connection; both flavors have it.
const processlistQuery = "SELECT ID, USER, COMMAND FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"

func readSessions(ctx context.Context, ex executor, query string) ([]session, error) {
	rows, err := ex.query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	out := make([]session, 0, len(rows))
	for _, r := range rows {
		id, err := strconv.ParseUint(r.str("ID"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("list connections: bad id %q", r.str("ID"))
		}
		out = append(out, session{ID: id, User: r.str("USER"), Command: r.str("COMMAND")})
	}
	return out, nil
}

// seconds renders a wait timeout for MASTER_GTID_WAIT and
// WAIT_FOR_EXECUTED_GTID_SET, which both take fractional seconds.
func seconds(d time.Duration) float64 {
	return float64(max(d, time.Millisecond).Milliseconds()) / 1000
}

// semiSync reads SHOW GLOBAL VARIABLES/STATUS LIKE 'rpl_semi_sync%' in
// either naming (source/replica or master/slave).
func semiSync(vars, status map[string]string) SemiSync {
	either := func(m map[string]string, a, b string) string {
		if v, ok := m[a]; ok {
			return v
		}
		return m[b]
	}
	clients, _ := strconv.Atoi(either(status, "rpl_semi_sync_source_clients", "rpl_semi_sync_master_clients"))
	noTx, _ := strconv.ParseInt(either(status, "rpl_semi_sync_source_no_tx", "rpl_semi_sync_master_no_tx"), 10, 64)
	yesTx, _ := strconv.ParseInt(either(status, "rpl_semi_sync_source_yes_tx", "rpl_semi_sync_master_yes_tx"), 10, 64)
	return SemiSync{
		SourceNoTx:     noTx,
		SourceYesTx:    yesTx,
		SourceEnabled:  parseBool(either(vars, "rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled")),
		ReplicaEnabled: parseBool(either(vars, "rpl_semi_sync_replica_enabled", "rpl_semi_sync_slave_enabled")),
		SourceActive:   parseBool(either(status, "rpl_semi_sync_source_status", "rpl_semi_sync_master_status")),
		SourceClients:  clients,
	}
}

// sharedVerbs holds the statements both flavors send alike; each dialect
// embeds it. MariaDB 10.5+ accepts SHOW REPLICA STATUS, and its rows are read
// by the same parser, which knows both column spellings.
type sharedVerbs struct{}

// uptime is mysqld's Uptime status variable, read with the semi-sync
// status in one statement, plus half a second (the middle of the whole
// second it names), so a server under a second old still reads as known;
// zero when it is not listed or does not parse.
func uptime(status map[string]string) time.Duration {
	n, err := strconv.ParseInt(status["uptime"], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n)*time.Second + time.Second/2
}

func (sharedVerbs) replicaStatus(ctx context.Context, ex executor) (*ReplicaStatus, error) {
	rows, err := ex.query(ctx, "SHOW REPLICA STATUS")
	if err != nil {
		return nil, fmt.Errorf("replica status: %w", err)
	}
	r := pickChannel(rows)
	if r == nil {
		return nil, nil
	}
	rs := parseReplicaStatus(r)
	return &rs, nil
}

func (sharedVerbs) setLockWaitTimeout(ctx context.Context, ex executor, s int) error {
	return ex.exec(ctx, "SET SESSION lock_wait_timeout = ?", s)
}
