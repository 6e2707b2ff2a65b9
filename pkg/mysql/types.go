package mysql

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Endpoint is a server's network address as a replica's source.
type Endpoint struct {
	Host string
	Port int
}

// String is "host:port".
func (e Endpoint) String() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// Credentials are an account's user and password, and for a replication
// account the TLS the replica connects with (the zero value for none).
type Credentials struct {
	User     string
	Password string
	TLS      SourceTLS
}

// Config says how to reach one server and who the application is.
type Config struct {
	// Addr is "host:port". Socket, a unix socket path, is used instead when set.
	Addr   string
	Socket string
	// User and Password are the operator's account. Its sessions are never
	// killed by KillAppConnections.
	User     string
	Password string
	// Flavor forces the SQL dialect; "" or auto reads @@version.
	Flavor v1alpha1.Flavor
	// AppUsers, when not empty, are the only accounts KillAppConnections kills.
	AppUsers []string
	// SystemUsers are accounts KillAppConnections never kills, beyond the
	// server's own threads, replication threads, User and the calling
	// connection: put the replication and monitoring accounts here.
	SystemUsers []string
	// DialTimeout, ReadTimeout and WriteTimeout back up the context deadline
	// (defaults 2 s, 10 s, 10 s). Waits are cut into slices shorter than ReadTimeout.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// LockWaitTimeout bounds each attempt to set read_only while writes are
	// running (default 1 s, whole seconds).
	LockWaitTimeout time.Duration
	// MaxOpenConns caps the connection pool (default 4).
	MaxOpenConns int
	// TLS, when not nil, secures TCP connections and checks the server's
	// certificate; nil connects without TLS.
	TLS *ClientTLS
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.DialTimeout, 2*time.Second)
	def(&c.ReadTimeout, 10*time.Second)
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.LockWaitTimeout, time.Second)
	if c.MaxOpenConns <= 0 {
		c.MaxOpenConns = 4
	}
	if c.Flavor == "" {
		c.Flavor = v1alpha1.FlavorAuto
	}
	return c
}

func (c Config) address() string {
	if c.Socket != "" {
		return c.Socket
	}
	return c.Addr
}

// Status is one observation of a server.
type Status struct {
	Flavor  v1alpha1.Flavor
	Version string // @@version
	// ServerID is @@server_id; ServerUUID is @@server_uuid (MySQL only).
	ServerID   uint32
	ServerUUID string
	// ReadOnly is @@read_only; SuperReadOnly is @@super_read_only (MySQL only).
	ReadOnly      bool
	SuperReadOnly bool
	// Executed is every transaction the server has applied: MySQL's
	// @@gtid_executed, or MariaDB's @@gtid_binlog_state through BinlogState.Set.
	Executed gtid.Set
	// GTIDExecuted is MySQL's raw @@gtid_executed.
	GTIDExecuted string
	// MariaDB's raw GTID variables.
	GTIDBinlogState, GTIDBinlogPos, GTIDSlavePos, GTIDCurrentPos string
	// Replica is nil when no replication is configured.
	Replica  *ReplicaStatus
	SemiSync SemiSync
	// Uptime is how long mysqld has run: the Uptime status variable (whole
	// seconds, truncated) plus half a second, the middle of the second it
	// names, so a read is never zero; zero only when unknown. A restart sets
	// it back: a replica's relay log may be gone with it.
	Uptime time.Duration
}

// Fenced tells whether application accounts are refused writes: MariaDB's
// read_only, MySQL's super_read_only.
func (s Status) Fenced() bool {
	if s.Flavor == v1alpha1.FlavorMySQL {
		return s.SuperReadOnly
	}
	return s.ReadOnly
}

// Writable tells whether the server accepts writes from application accounts.
func (s Status) Writable() bool { return !s.ReadOnly && !s.SuperReadOnly }

// SemiSync is the semi-synchronous replication state (all false without the plugin).
type SemiSync struct {
	SourceEnabled  bool // rpl_semi_sync_{source,master}_enabled
	ReplicaEnabled bool // rpl_semi_sync_{replica,slave}_enabled
	SourceActive   bool // Rpl_semi_sync_{source,master}_status
	SourceClients  int  // Rpl_semi_sync_{source,master}_clients
	// SourceNoTx and SourceYesTx count the commits the source acknowledged
	// to clients without and with a replica's acknowledgement since it
	// started (Rpl_semi_sync_{source,master}_{no,yes}_tx).
	SourceNoTx, SourceYesTx int64
	// Missing names what the server lacks to take part in semi-sync
	// replication ("" when nothing): on MySQL, the semisync_source and
	// semisync_replica plugins, seen by their variables. MariaDB has it
	// built in.
	Missing string
}

// IO thread states, as SHOW REPLICA STATUS spells them.
const (
	ThreadYes        = "Yes"
	ThreadNo         = "No"
	ThreadConnecting = "Connecting"
)

// ReplicaStatus is the default channel's row of SHOW REPLICA STATUS, read
// from either MySQL's Replica_*/Source_* columns or MariaDB's Slave_*/Master_*.
type ReplicaStatus struct {
	SourceHost string
	SourcePort int
	SourceUser string
	// IORunning is ThreadYes, ThreadNo or ThreadConnecting.
	IORunning    string
	SQLRunning   bool
	IOState      string
	LastIOErrno  int
	LastIOError  string
	LastSQLErrno int
	LastSQLError string
	// SecondsBehind is Seconds_Behind_{Source,Master}, -1 when NULL.
	SecondsBehind int64
	// Retrieved is what the IO thread received: MySQL Retrieved_Gtid_Set,
	// MariaDB Gtid_IO_Pos. Applied is MySQL Executed_Gtid_Set or MariaDB
	// Gtid_Slave_Pos.
	Retrieved string
	Applied   string
	// AutoPosition is MySQL's Auto_Position or MariaDB's Using_Gtid != No;
	// UsingGTID is MariaDB's Using_Gtid (Slave_Pos, Current_Pos or No).
	AutoPosition bool
	UsingGTID    string
	Channel      string
	// SSLAllowed is {Source,Master}_SSL_Allowed = Yes; the files and the
	// verify flag are the {Source,Master}_SSL_* columns.
	SSLAllowed                         bool
	SSLCAFile, SSLCertFile, SSLKeyFile string
	SSLVerifyServerCert                bool
}

// Source is the configured source's endpoint.
func (r ReplicaStatus) Source() Endpoint { return Endpoint{Host: r.SourceHost, Port: r.SourcePort} }

// Healthy tells whether both threads run without errors.
func (r ReplicaStatus) Healthy() bool {
	return r.IORunning == ThreadYes && r.SQLRunning && r.LastIOErrno == 0 && r.LastSQLErrno == 0
}

// Err is nil unless a replication thread stopped on an error. It wraps
// ErrReplicationBroken, and also ErrDiverged when the error says so. An IO
// thread still retrying (Connecting) is not broken: the source may come back.
func (r ReplicaStatus) Err() error {
	switch {
	case r.LastSQLErrno != 0 && !r.SQLRunning:
		return threadErr("SQL", r.LastSQLErrno, r.LastSQLError)
	case r.LastIOErrno != 0 && r.IORunning == ThreadNo:
		return threadErr("IO", r.LastIOErrno, r.LastIOError)
	}
	return nil
}

func threadErr(thread string, errno int, msg string) error {
	if diverged(errno, msg) {
		return fmt.Errorf("%w: %w: %s thread error %d: %s", ErrReplicationBroken, ErrDiverged, thread, errno, msg)
	}
	return fmt.Errorf("%w: %s thread error %d: %s", ErrReplicationBroken, thread, errno, msg)
}

func diverged(errno int, msg string) bool {
	return errno == errGTIDStrictOrder ||
		errno == errSourceFatal && strings.Contains(strings.ToLower(msg), "diverged")
}
