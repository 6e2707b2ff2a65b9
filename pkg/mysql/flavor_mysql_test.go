package mysql

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

const (
	uuidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uuidB = "8f3b1c2a-0d4e-11ef-8a7c-0242ac120002"
)

// A MySQL 8.4 replica row, healthy, replicating from db-a.
var mysqlReplicaRow = []string{
	"Replica_IO_State=Waiting for source to send event", "Source_Host=db-a", "Source_User=repl",
	"Source_Port=3306", "Replica_IO_Running=Yes", "Replica_SQL_Running=Yes", "Last_IO_Errno=0",
	"Last_IO_Error=", "Last_SQL_Errno=0", "Last_SQL_Error=", "Seconds_Behind_Source=0",
	"Retrieved_Gtid_Set=" + uuidA + ":1-10", "Executed_Gtid_Set=" + uuidA + ":1-10,\n" + uuidB + ":1-2",
	"Auto_Position=1", "Channel_Name=",
}

func TestMySQLStatements(t *testing.T) {
	ctx := context.Background()
	cfg := Config{User: "bloodraven", SystemUsers: []string{"repl", "monitor"}}
	set := gtid.MustParseSet(uuidA + ":1-10")
	fenced := []string{"read_only=1", "super_read_only=1"}
	writable := []string{"read_only=0", "super_read_only=0"}
	lockWait := &gomysql.MySQLError{Number: errLockWaitTimeout, Message: "Lock wait timeout exceeded"}
	tests := []struct {
		name  string
		setup func(*recorder)
		verb  func(*instance) error
		want  []string
	}{{
		name: "fence kills only application sessions and verifies",
		setup: func(r *recorder) {
			r.answer(processlistQuery,
				[]string{"ID=11", "USER=app", "COMMAND=Query"},
				[]string{"ID=12", "USER=system user", "COMMAND=Connect"},
				[]string{"ID=13", "USER=bloodraven", "COMMAND=Sleep"},
				[]string{"ID=14", "USER=repl", "COMMAND=Binlog Dump GTID"},
				[]string{"ID=15", "USER=monitor", "COMMAND=Sleep"},
				[]string{"ID=16", "USER=event_scheduler", "COMMAND=Daemon"},
				[]string{"ID=17", "USER=reporting", "COMMAND=Sleep"})
			r.answer(mysqlReadOnlyQuery, fenced)
		},
		verb: func(in *instance) error { return in.Fence(ctx) },
		want: []string{
			"SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON",
			processlistQuery, "KILL CONNECTION ? [11]", "KILL CONNECTION ? [17]", mysqlReadOnlyQuery,
		},
	}, {
		name: "fence held back by a running write kills and retries",
		setup: func(r *recorder) {
			r.errs["SET GLOBAL super_read_only = ON"] = []error{lockWait}
			r.answer(mysqlReadOnlyQuery, fenced)
		},
		verb: func(in *instance) error { return in.Fence(ctx) },
		want: []string{
			"SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON", processlistQuery,
			"SET GLOBAL super_read_only = ON", processlistQuery, mysqlReadOnlyQuery,
		},
	}, {
		name:  "unfence under the topology lock clears super_read_only, then read_only",
		setup: func(r *recorder) { r.answer(mysqlReadOnlyQuery, writable) },
		verb:  func(in *instance) error { return in.Unfence(ctx) },
		want: []string{idleSent, lockSent, "SHOW REPLICA STATUS", "SET GLOBAL super_read_only = OFF",
			"SET GLOBAL read_only = OFF", mysqlReadOnlyQuery, unlockStatement},
	}, {
		name: "promote a replica",
		setup: func(r *recorder) {
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-10"})
			r.answer(mysqlReadOnlyQuery, writable)
		},
		verb: func(in *instance) error { _, err := in.Promote(ctx, PromoteOptions{}); return err },
		want: []string{
			idleSent, lockSent, "SHOW REPLICA STATUS", "STOP REPLICA", "SHOW REPLICA STATUS", "RESET REPLICA ALL",
			mysqlExecutedQuery, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF", mysqlReadOnlyQuery,
			unlockStatement,
		},
	}, {
		name: "promote with the semi-sync source part set under the lock",
		setup: func(r *recorder) {
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(semiSyncVarsQuery, []string{"Variable_name=rpl_semi_sync_source_enabled", "Value=OFF"},
				[]string{"Variable_name=rpl_semi_sync_replica_enabled", "Value=ON"})
			r.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-10"})
			r.answer(mysqlReadOnlyQuery, writable)
		},
		verb: func(in *instance) error {
			_, err := in.Promote(ctx, PromoteOptions{SemiSync: &SemiSyncSettings{Source: true, Timeout: time.Second, WaitCount: 1}})
			return err
		},
		want: []string{
			idleSent, lockSent, "SHOW REPLICA STATUS", "STOP REPLICA", "SHOW REPLICA STATUS",
			semiSyncVarsQuery, "SHOW REPLICA STATUS", "STOP REPLICA",
			"SET GLOBAL rpl_semi_sync_source_timeout = 1000", "SET GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_SYNC'",
			"SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 1", "SET GLOBAL rpl_semi_sync_source_enabled = ON",
			"SET GLOBAL rpl_semi_sync_replica_enabled = OFF",
			"RESET REPLICA ALL", mysqlExecutedQuery, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF",
			mysqlReadOnlyQuery, unlockStatement,
		},
	}, {
		name: "promote again: nothing to reset",
		setup: func(r *recorder) {
			r.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-10"})
			r.answer(mysqlReadOnlyQuery, writable)
		},
		verb: func(in *instance) error { _, err := in.Promote(ctx, PromoteOptions{}); return err },
		want: []string{
			idleSent, lockSent, "SHOW REPLICA STATUS", mysqlExecutedQuery,
			"SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF", mysqlReadOnlyQuery, unlockStatement,
		},
	}, {
		name: "replicate from a new source",
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{Host: "db-b", Port: 3307}, Credentials{User: "repl", Password: "pw"})
		},
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON",
			mysqlChangeSource + " [db-b 3307 repl pw]", "START REPLICA",
		},
	}, {
		name:  "replicate from a different source than now",
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlReplicaRow) },
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{Host: "db-b", Port: 3306}, Credentials{User: "repl", Password: "pw"})
		},
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON", "STOP REPLICA",
			mysqlChangeSource + " [db-b 3306 repl pw]", "START REPLICA",
		},
	}, {
		name:  "replicate from the current, healthy source is a no-op",
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlReplicaRow) },
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{Host: "db-a", Port: 3306}, Credentials{User: "repl", Password: "pw"})
		},
		want: []string{"SHOW REPLICA STATUS"},
	}, {
		name:  "wait for a set already executed",
		setup: func(r *recorder) { r.answer(mysqlSubsetQuery, []string{"reached=1"}) },
		verb:  func(in *instance) error { return in.WaitForGTID(ctx, set, 5*time.Second) },
		want:  []string{mysqlSubsetQuery + " [" + set.String() + "]"},
	}, {
		name: "wait for a set still arriving",
		setup: func(r *recorder) {
			r.answer(mysqlSubsetQuery, []string{"reached=0"})
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(mysqlWaitQuery, []string{"result=0"})
		},
		verb: func(in *instance) error { return in.WaitForGTID(ctx, set, 5*time.Second) },
		want: []string{
			mysqlSubsetQuery + " [" + set.String() + "]", "SHOW REPLICA STATUS",
			mysqlWaitQuery + " [" + set.String() + " 1]",
		},
	}, {
		name:  "stop replication",
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlReplicaRow) },
		verb:  func(in *instance) error { return in.StopReplication(ctx) },
		want:  []string{"SHOW REPLICA STATUS", "STOP REPLICA"},
	}, {
		name: "stop replication when there is none",
		verb: func(in *instance) error { return in.StopReplication(ctx) },
		want: []string{"SHOW REPLICA STATUS"},
	}, {
		name: "drain the relay log up to Retrieved_Gtid_Set",
		setup: func(r *recorder) {
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(mysqlSubsetQuery, []string{"reached=1"})
		},
		verb: func(in *instance) error { return in.DrainRelayLog(ctx, time.Second) },
		want: []string{"SHOW REPLICA STATUS", mysqlSubsetQuery + " [" + uuidA + ":1-10]"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			if tc.setup != nil {
				tc.setup(rec)
			}
			if err := tc.verb(recorded(cfg, mysqlDialect{}, rec)); err != nil {
				t.Fatalf("verb: %v", err)
			}
			if got := rec.sent(); !slices.Equal(got, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestMySQLFenceNotVerified(t *testing.T) {
	rec := newRecorder()
	rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=0"})
	err := recorded(Config{}, mysqlDialect{}, rec).Fence(context.Background())
	if !errors.Is(err, ErrFenceNotVerified) || !strings.HasPrefix(err.Error(), "fence db:3306: ") {
		t.Fatalf("got %v, want ErrFenceNotVerified wrapped with verb and address", err)
	}
}

func TestMySQLStatus(t *testing.T) {
	rec := newRecorder()
	rec.answer(mysqlStatusQuery, []string{
		"version=8.4.3", "server_id=7", "server_uuid=" + uuidB, "read_only=1", "super_read_only=1",
		"gtid_executed=" + uuidA + ":1-10,\n" + uuidB + ":1-2",
	})
	rec.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
	rec.answer(mysqlSemiSyncVars, []string{"Variable_name=rpl_semi_sync_source_enabled", "Value=ON"},
		[]string{"Variable_name=rpl_semi_sync_replica_enabled", "Value=OFF"})
	rec.answer(mysqlSemiSyncStatus, []string{"Variable_name=Rpl_semi_sync_source_status", "Value=ON"},
		[]string{"Variable_name=Rpl_semi_sync_source_clients", "Value=2"}, []string{"Variable_name=Uptime", "Value=3605"})
	st, err := recorded(Config{}, mysqlDialect{}, rec).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Uptime comes with the semi-sync status, in the same statement: the
	// probe runs on every poll of every site, and a round trip of its own
	// cost one more query each time.
	if got := rec.sent(); len(got) != 4 || got[3] != mysqlSemiSyncStatus || st.Uptime != 3605*time.Second+time.Second/2 {
		t.Fatalf("sent %v, uptime %s: want four statements, the status one last, 3605.5 s", got, st.Uptime)
	}
	want := gtid.MustParseSet(uuidA + ":1-10," + uuidB + ":1-2")
	switch {
	case st.Flavor != "mysql", st.ServerID != 7, st.ServerUUID != uuidB, !st.Fenced(), st.Writable():
		t.Fatalf("identity/read-only: %+v", st)
	case !st.Executed.Equal(want):
		t.Fatalf("executed %s, want %s", st.Executed, want)
	case st.Replica == nil || !st.Replica.Healthy() || st.Replica.Source() != (Endpoint{"db-a", 3306}):
		t.Fatalf("replica: %+v", st.Replica)
	case st.SemiSync != (SemiSync{SourceEnabled: true, SourceActive: true, SourceClients: 2}):
		t.Fatalf("semi-sync: %+v", st.SemiSync)
	}
}

// TestMySQLSemiSyncMissing: a MySQL server lists the semi-sync variables
// of the plugins it loaded only; the probe names the plugins it lacks.
func TestMySQLSemiSyncMissing(t *testing.T) {
	source := []string{"Variable_name=rpl_semi_sync_source_enabled", "Value=OFF"}
	replica := []string{"Variable_name=rpl_semi_sync_replica_enabled", "Value=OFF"}
	oldMaster := []string{"Variable_name=rpl_semi_sync_master_enabled", "Value=OFF"}
	tests := []struct {
		name    string
		vars    [][]string
		missing string
	}{
		{"both plugins loaded", [][]string{source, replica}, ""},
		{"no plugin loaded", nil, "plugin semisync_source (no rpl_semi_sync_source_enabled), " +
			"plugin semisync_replica (no rpl_semi_sync_replica_enabled)"},
		{"only the source plugin", [][]string{source}, "plugin semisync_replica (no rpl_semi_sync_replica_enabled)"},
		{"the old master plugin is not the source plugin", [][]string{oldMaster, replica},
			"plugin semisync_source (no rpl_semi_sync_source_enabled)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(mysqlStatusQuery, []string{"version=8.4.3", "server_id=7", "server_uuid=" + uuidB,
				"read_only=1", "super_read_only=1", "gtid_executed=" + uuidA + ":1-10"})
			rec.answer(mysqlSemiSyncVars, tc.vars...)
			rec.answer(mysqlSemiSyncStatus)
			st, err := recorded(Config{}, mysqlDialect{}, rec).Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.SemiSync.Missing != tc.missing {
				t.Fatalf("missing %q, want %q", st.SemiSync.Missing, tc.missing)
			}
		})
	}
}
