package mysql

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestCloneStatements pins what seeding by clone sends on both flavors.
// MySQL 8 cannot be installed here, so its CLONE plugin statements are
// checked as text; MariaDB's join also runs in pkg/clone's db tier.
func TestCloneStatements(t *testing.T) {
	ctx := context.Background()
	donor := Endpoint{Host: "db-a", Port: 3306}
	creds := Credentials{User: "clone", Password: "pw"}
	tlsCreds := Credentials{User: "clone", Password: "pw", TLS: replicaTLS}
	const mysqlFence = "SET GLOBAL super_read_only = ON"
	tests := []struct {
		name  string
		d     dialect
		setup func(*recorder)
		verb  func(*instance) error
		want  []string
		err   error
	}{
		{
			name: "mysql clone installs the plugin, allows the donor, clones without TLS",
			d:    mysqlDialect{},
			verb: func(in *instance) error { return in.CloneFrom(ctx, donor, creds) },
			want: []string{mysqlClonePluginQuery, mysqlInstallClone,
				"SET GLOBAL clone_valid_donor_list = ? [db-a:3306]",
				"CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? REQUIRE NO SSL [clone db-a 3306 pw]"},
		},
		{
			name:  "mysql clone with the plugin active and TLS",
			d:     mysqlDialect{},
			setup: func(r *recorder) { r.answer(mysqlClonePluginQuery, []string{"status=ACTIVE"}) },
			verb:  func(in *instance) error { return in.CloneFrom(ctx, donor, tlsCreds) },
			want: []string{mysqlClonePluginQuery,
				"SET GLOBAL clone_valid_donor_list = ? [db-a:3306]",
				"CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? REQUIRE SSL [clone db-a 3306 pw]"},
		},
		{
			name: "mysql donor installs the plugin",
			d:    mysqlDialect{},
			verb: func(in *instance) error { return in.PrepareCloneDonor(ctx) },
			want: []string{mysqlClonePluginQuery, mysqlInstallClone},
		},
		{
			name: "mariadb has no clone plugin",
			d:    mariadbDialect{},
			verb: func(in *instance) error { return in.CloneFrom(ctx, donor, creds) },
			err:  ErrCloneUnsupported,
		},
		{
			name: "mariadb has no clone donor either",
			d:    mariadbDialect{},
			verb: func(in *instance) error { return in.PrepareCloneDonor(ctx) },
			err:  ErrCloneUnsupported,
		},
		{
			name: "mysql joins by auto-position after a clone",
			d:    mysqlDialect{},
			setup: func(r *recorder) {
				r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			},
			verb: func(in *instance) error { return in.JoinAfterClone(ctx, donor, creds, "") },
			want: []string{"SET SESSION lock_wait_timeout = ? [1]", mysqlFence, "SHOW REPLICA STATUS",
				"STOP REPLICA", "RESET REPLICA ALL",
				mysqlChangeSource + " [db-a 3306 clone pw]", "START REPLICA"},
		},
		{
			name: "mysql refuses a position of its own",
			d:    mysqlDialect{},
			verb: func(in *instance) error { return in.JoinAfterClone(ctx, donor, creds, "0-1-5") },
			err:  ErrInvalidConfig,
		},
		{
			name: "mariadb sets gtid_slave_pos and replicates from slave_pos",
			d:    mariadbDialect{},
			verb: func(in *instance) error { return in.JoinAfterClone(ctx, donor, creds, "0-1-42,1-2-7") },
			want: []string{"SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL read_only = ON", "SHOW REPLICA STATUS",
				"SET GLOBAL gtid_slave_pos = ? [0-1-42,1-2-7]",
				mariadbChangeMasterCloned + " [db-a 3306 clone pw]", "START REPLICA"},
		},
		{
			name: "mariadb refuses a malformed position before setting it",
			d:    mariadbDialect{},
			verb: func(in *instance) error { return in.JoinAfterClone(ctx, donor, creds, "0-1-5'; DROP") },
			err:  ErrInvalidConfig,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			if tc.setup != nil {
				tc.setup(rec)
			}
			err := tc.verb(recorded(Config{User: "bloodraven"}, tc.d, rec))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				if slices.ContainsFunc(rec.sent(), func(s string) bool { return s == mariadbSetSlavePos }) {
					t.Fatalf("a refused join set a position: %q", rec.sent())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.sent(); !slices.Equal(got, tc.want) {
				t.Fatalf("sent\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}
