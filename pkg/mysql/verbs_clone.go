package mysql

import (
	"context"
	"fmt"
	"regexp"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// Cloner is what seeding a site by physical clone needs of its server,
// beyond Instance. The Instance Open returns implements it; assert it
// (in.(mysql.Cloner)). It is kept out of Instance so that stand-ins of
// Instance (the simulation's) need not grow.
type Cloner interface {
	// JoinAfterClone makes a freshly cloned server a read-only replica of
	// source, from position: the GTID position the clone's backup recorded
	// (MariaDB: gtid_slave_pos, then MASTER_USE_GTID=slave_pos). On MySQL,
	// where CLONE INSTANCE already set gtid_executed, position must be
	// empty and the replica connects with auto-positioning. Any replication
	// the clone carried over is forgotten first. Repeating it is harmless.
	JoinAfterClone(ctx context.Context, source Endpoint, creds Credentials, position string) error
	// SeedPosition is JoinAfterClone without the source: read-only, any
	// replication the clone carried over forgotten, and (MariaDB)
	// gtid_slave_pos set to position, so that whoever points the server at
	// a source next (the operator, with MASTER_USE_GTID=current_pos, which
	// equals slave_pos on a clone with no binlogs of its own) starts there.
	// On MySQL position must be empty. Repeating it is harmless.
	SeedPosition(ctx context.Context, position string) error
	// CloneFrom (MySQL 8.0.17+) replaces this server's data with donor's
	// through the CLONE plugin: installs the plugin when missing, allows
	// donor in clone_valid_donor_list, and runs CLONE INSTANCE FROM as
	// creds (an account with BACKUP_ADMIN on the donor), over TLS when
	// creds.TLS is set. The server restarts by itself when it finishes.
	// MariaDB has no CLONE: ErrCloneUnsupported (use pkg/clone's stream).
	CloneFrom(ctx context.Context, donor Endpoint, creds Credentials) error
	// PrepareCloneDonor (MySQL) installs the CLONE plugin when missing, so
	// that a recipient may clone from this server. MariaDB: ErrCloneUnsupported.
	PrepareCloneDonor(ctx context.Context) error
}

var _ Cloner = (*instance)(nil)

// Statements of the clone verbs.
const (
	// The first is MariaDB's own: replication after a clone starts from the
	// position the backup recorded, set as gtid_slave_pos (the clone has no
	// binlogs of its own, so current_pos would say the same, but slave_pos
	// says what is meant).
	mariadbSetSlavePos        = "SET GLOBAL gtid_slave_pos = ?"
	mariadbSetBinlogState     = "SET GLOBAL gtid_binlog_state = ?"
	mariadbChangeMasterCloned = "CHANGE MASTER TO MASTER_HOST=?, MASTER_PORT=?, MASTER_USER=?, " +
		"MASTER_PASSWORD=?, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1"
	mysqlClonePluginQuery = "SELECT PLUGIN_STATUS AS status FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'clone'"
	mysqlInstallClone     = "INSTALL PLUGIN clone SONAME 'mysql_clone.so'"
	mysqlCloneDonorList   = "SET GLOBAL clone_valid_donor_list = ?"
	// The account, host and password go in as string literals and the port
	// as a number: CLONE INSTANCE takes no placeholders server-side, and
	// the driver interpolates them client-side, quoted.
	mysqlCloneInstance = "CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ?"
	mysqlCloneSSL      = " REQUIRE SSL"
	mysqlCloneNoSSL    = " REQUIRE NO SSL"
)

// mariadbPosition is a MariaDB GTID position: domain-server-seqno, comma
// separated, or empty.
var mariadbPosition = regexp.MustCompile(`^(\d+-\d+-\d+(,\s*\d+-\d+-\d+)*)?$`)

func (in *instance) JoinAfterClone(ctx context.Context, source Endpoint, creds Credentials, position string) error {
	verb := "join after clone from " + source.String()
	if err := creds.TLS.validate(); err != nil {
		return wrap(verb, in.addr, err)
	}
	return in.run(ctx, verb, 0, func(ctx context.Context, ex executor, d dialect) error {
		if err := d.setLockWaitTimeout(ctx, ex, in.lockWaitSeconds()); err != nil {
			return err
		}
		if err := d.setFenced(ctx, ex, true); err != nil {
			return fmt.Errorf("set read-only: %w", err)
		}
		if err := forgetReplication(ctx, ex, d); err != nil {
			return err
		}
		switch d.(type) {
		case mariadbDialect:
			if !mariadbPosition.MatchString(position) {
				return fmt.Errorf("%w: GTID position %q", ErrInvalidConfig, position)
			}
			if err := ex.exec(ctx, mariadbSetSlavePos, position); err != nil {
				return fmt.Errorf("set gtid_slave_pos: %w", err)
			}
			if err := mariadbChangeCloned(ctx, ex, source, creds); err != nil {
				return fmt.Errorf("change source: %w", err)
			}
		default:
			if position != "" {
				return fmt.Errorf("%w: %s takes its position from CLONE, not %q", ErrInvalidConfig, d.flavor(), position)
			}
			if err := d.changeSource(ctx, ex, source, creds); err != nil {
				return fmt.Errorf("change source: %w", err)
			}
		}
		if err := d.startReplica(ctx, ex); err != nil {
			return fmt.Errorf("start replica: %w", err)
		}
		return nil
	})
}

func (in *instance) SeedPosition(ctx context.Context, position string) error {
	return in.SeedPositionWith(ctx, position, position)
}

// SeedPositionWith is SeedPosition with the clone's gtid_binlog_state
// seeded as state (MariaDB), which must end at position in each domain: a
// clone's history of other servers (gtid.CloneState). Not part of Cloner.
func (in *instance) SeedPositionWith(ctx context.Context, position, state string) error {
	return in.run(ctx, "seed the clone's position", 0, func(ctx context.Context, ex executor, d dialect) error {
		if err := d.setLockWaitTimeout(ctx, ex, in.lockWaitSeconds()); err != nil {
			return err
		}
		if err := d.setFenced(ctx, ex, true); err != nil {
			return fmt.Errorf("set read-only: %w", err)
		}
		if err := forgetReplication(ctx, ex, d); err != nil {
			return err
		}
		if _, ok := d.(mariadbDialect); !ok {
			if position != "" {
				return fmt.Errorf("%w: %s takes its position from CLONE, not %q", ErrInvalidConfig, d.flavor(), position)
			}
			return nil
		}
		if !mariadbPosition.MatchString(position) {
			return fmt.Errorf("%w: GTID position %q", ErrInvalidConfig, position)
		}
		if err := ex.exec(ctx, mariadbSetSlavePos, position); err != nil {
			return fmt.Errorf("set gtid_slave_pos: %w", err)
		}
		return seedBinlogState(ctx, ex, position, state)
	})
}

// seedBinlogState makes a fresh MariaDB clone's gtid_binlog_state the
// backup's position: without it the clone, having no binlogs of its own,
// shows an empty executed set until it replicates a transaction, and an
// idle group's reclone would never be seen caught up. Only a clone with no
// binlog state yet is reset (RESET MASTER drops nothing it needs: it has
// written nothing); one that already holds position is left alone; any
// other state is refused.
func seedBinlogState(ctx context.Context, ex executor, position, want string) error {
	if err := checkSeedState(position, want); err != nil {
		return err
	}
	r, err := queryOne(ctx, ex, mariadbStateQuery)
	if err != nil {
		return fmt.Errorf("read gtid_binlog_state: %w", err)
	}
	switch state := r.str("gtid_binlog_state"); {
	case sameState(state, want):
		return nil
	case state == "", sameState(state, position):
		// Nothing logged, or only the position an earlier seed set.
	default:
		return fmt.Errorf("%w: the clone already logged %q, not the backup's %q", ErrInvalidConfig, state, want)
	}
	if err := ex.exec(ctx, "RESET MASTER"); err != nil {
		return fmt.Errorf("reset the clone's binlog: %w", err)
	}
	if err := ex.exec(ctx, mariadbSetBinlogState, want); err != nil {
		return fmt.Errorf("set gtid_binlog_state: %w", err)
	}
	return nil
}

func mariadbChangeCloned(ctx context.Context, ex executor, src Endpoint, c Credentials) error {
	if !c.TLS.Enabled() {
		return ex.exec(ctx, mariadbChangeMasterCloned, src.Host, src.Port, c.User, c.Password)
	}
	t := c.TLS
	return ex.exec(ctx, mariadbChangeMasterCloned+mariadbMasterSSL, src.Host, src.Port, c.User, c.Password,
		t.CAFile, t.CertFile, t.KeyFile, flag(t.VerifyServerCert))
}

func (in *instance) CloneFrom(ctx context.Context, donor Endpoint, creds Credentials) error {
	return in.run(ctx, "clone from "+donor.String(), 0, func(ctx context.Context, ex executor, d dialect) error {
		if _, ok := d.(mysqlDialect); !ok {
			return fmt.Errorf("%w: %s", ErrCloneUnsupported, d.flavor())
		}
		if err := installClonePlugin(ctx, ex); err != nil {
			return err
		}
		if err := ex.exec(ctx, mysqlCloneDonorList, donor.String()); err != nil {
			return fmt.Errorf("allow donor: %w", err)
		}
		stmt := mysqlCloneInstance + mysqlCloneNoSSL
		if creds.TLS.Enabled() {
			stmt = mysqlCloneInstance + mysqlCloneSSL
		}
		if err := ex.exec(ctx, stmt, creds.User, donor.Host, donor.Port, creds.Password); err != nil {
			return fmt.Errorf("clone instance: %w", err)
		}
		return nil
	})
}

func (in *instance) PrepareCloneDonor(ctx context.Context) error {
	return in.run(ctx, "prepare clone donor", 0, func(ctx context.Context, ex executor, d dialect) error {
		if _, ok := d.(mysqlDialect); !ok {
			return fmt.Errorf("%w: %s", ErrCloneUnsupported, d.flavor())
		}
		return installClonePlugin(ctx, ex)
	})
}

// installClonePlugin installs the CLONE plugin unless it is already active.
func installClonePlugin(ctx context.Context, ex executor) error {
	rows, err := ex.query(ctx, mysqlClonePluginQuery)
	if err != nil {
		return fmt.Errorf("clone plugin status: %w", err)
	}
	if len(rows) > 0 && rows[0].str("status") == "ACTIVE" {
		return nil
	}
	if err := ex.exec(ctx, mysqlInstallClone); err != nil {
		return fmt.Errorf("install clone plugin: %w", err)
	}
	return nil
}

// checkSeedState refuses a binlog state that does not end at position in
// each of its domains, or that names a domain position lacks.
func checkSeedState(position, want string) error {
	pos, err1 := gtid.ParsePos(position)
	st, err2 := gtid.ParseBinlogState(want)
	if err := firstErr(err1, err2); err != nil {
		return fmt.Errorf("%w: binlog state %q for position %q: %w", ErrInvalidConfig, want, position, err)
	}
	if st.Pos().String() != pos.String() {
		return fmt.Errorf("%w: binlog state %q does not end at position %q", ErrInvalidConfig, want, position)
	}
	return nil
}

// sameState compares two binlog states whatever their order.
func sameState(a, b string) bool {
	x, err1 := gtid.ParseBinlogState(a)
	y, err2 := gtid.ParseBinlogState(b)
	return err1 == nil && err2 == nil && x.String() == y.String()
}
