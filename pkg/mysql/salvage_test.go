package mysql

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
)

// TestSalvageStatements: the exact statements of SalvageFrom for both
// flavors. MySQL 8 cannot be installed here, so its flavor is checked by
// statement; MariaDB's is also run on real servers (salvage_db_test.go).
func TestSalvageStatements(t *testing.T) {
	mysqlUntil := gtid.MustParseSet(uuidA + ":1-12")
	mariaUntil := gtid.MustParseSet("0-1:1-12")
	src := Endpoint{Host: "db-a", Port: 3306}
	creds := Credentials{User: "repl", Password: "pw"}
	tests := []struct {
		name   string
		d      dialect
		until  gtid.Set
		expect gtid.Set
		part   *SemiSyncSettings
		setup  func(*recorder)
		want   []string
	}{{
		name: "MySQL: auto-position from the old primary, SQL_AFTER_GTIDS, stopped after",
		d:    mysqlDialect{}, until: mysqlUntil, expect: mysqlUntil,
		setup: func(r *recorder) {
			r.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(mysqlSubsetQuery, []string{"reached=1"})
			r.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-12"})
		},
		want: []string{
			idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, mysqlExecutedQuery,
			"SHOW REPLICA STATUS", "STOP REPLICA", mysqlChangeSource + " [db-a 3306 repl pw]",
			"START REPLICA UNTIL SQL_AFTER_GTIDS = ? [" + mysqlUntil.String() + "]",
			mysqlReadOnlyQuery, unlockStatement, mysqlSubsetQuery + " [" + mysqlUntil.String() + "]", "STOP REPLICA", mysqlExecutedQuery,
		},
	}, {
		name: "MySQL: a leftover source part turned to the replica part under the lock, after the checks",
		d:    mysqlDialect{}, until: mysqlUntil, expect: mysqlUntil, part: &SemiSyncSettings{Replica: true},
		setup: func(r *recorder) {
			r.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
			r.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
			r.answer(semiSyncVarsQuery, []string{"Variable_name=rpl_semi_sync_source_enabled", "Value=ON"},
				[]string{"Variable_name=rpl_semi_sync_replica_enabled", "Value=OFF"})
			r.answer(mysqlSubsetQuery, []string{"reached=1"})
			r.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-12"})
		},
		want: []string{
			idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, mysqlExecutedQuery,
			"SHOW REPLICA STATUS", "STOP REPLICA", semiSyncVarsQuery, "SHOW REPLICA STATUS",
			"STOP REPLICA", "SET GLOBAL rpl_semi_sync_source_enabled = OFF", "SET GLOBAL rpl_semi_sync_replica_enabled = ON",
			mysqlChangeSource + " [db-a 3306 repl pw]",
			"START REPLICA UNTIL SQL_AFTER_GTIDS = ? [" + mysqlUntil.String() + "]",
			mysqlReadOnlyQuery, unlockStatement, mysqlSubsetQuery + " [" + mysqlUntil.String() + "]", "STOP REPLICA", mysqlExecutedQuery,
		},
	}, {
		name: "MariaDB: GTID from the old primary, master_gtid_pos, stopped after",
		d:    mariadbDialect{}, until: mariaUntil, expect: mariaUntil,
		setup: func(r *recorder) {
			r.answer("SHOW REPLICA STATUS", []string{"Master_Host=db-a", "Master_Port=3306", "Slave_IO_Running=No",
				"Slave_SQL_Running=No", "Using_Gtid=Slave_Pos", "Gtid_IO_Pos=0-1-10"})
			r.answer(mariadbReadOnlyQuery, []string{"read_only=1"})
			r.answer(mariadbReachedQuery, []string{"gtid_binlog_state=0-1-12", "gtid_slave_pos=0-1-12"})
			r.answer(mariadbStateQuery, []string{"gtid_binlog_state=0-1-12"})
		},
		want: []string{
			idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mariadbReadOnlyQuery, mariadbStateQuery,
			"SHOW REPLICA STATUS", "STOP REPLICA", mariadbChangeMaster + " [db-a 3306 repl pw]", "START REPLICA UNTIL master_gtid_pos = ? [0-1-12]",
			mariadbReadOnlyQuery, unlockStatement, mariadbReachedQuery, "STOP REPLICA", mariadbStateQuery,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			tc.setup(rec)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := recorded(Config{}, tc.d, rec).SalvageFrom(ctx, src, creds, tc.until, tc.expect, tc.part)
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			if !got.Equal(tc.until) {
				t.Fatalf("executed after salvage %s, want %s", got, tc.until)
			}
			if sent := rec.sent(); !slices.Equal(sent, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(sent, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestSalvageStopsOnTimeout: a source that never delivers ends the wait
// by the deadline, and replication is stopped all the same.
func TestSalvageStopsOnTimeout(t *testing.T) {
	rec := newRecorder()
	rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
	rec.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
	rec.answer(mysqlSubsetQuery, []string{"reached=0"})
	rec.answer(mysqlWaitQuery, []string{"result=1"})
	rec.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-10"})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	got, err := recorded(Config{}, mysqlDialect{}, rec).SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306},
		Credentials{User: "repl"}, gtid.MustParseSet(uuidA+":1-12"), gtid.MustParseSet(uuidA+":1-10"), nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Fatalf("took %s past its deadline", took)
	}
	sent := rec.sent()
	if sent[len(sent)-2] != "STOP REPLICA" || !got.Equal(gtid.MustParseSet(uuidA+":1-10")) {
		t.Fatalf("ended with %v and executed %s; want STOP REPLICA then the executed read", sent[len(sent)-2:], got)
	}
}

func TestSalvageNeedsADeadline(t *testing.T) {
	_, err := recorded(Config{}, mysqlDialect{}, newRecorder()).SalvageFrom(context.Background(),
		Endpoint{Host: "db-a", Port: 3306}, Credentials{User: "repl"}, gtid.MustParseSet(uuidA+":1"), gtid.Set{}, nil)
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig", err)
	}
}

// TestSalvageRefusesAWritableServer: MySQL's flavor, by statement (the
// MariaDB one runs in salvage_db_test.go): a server whose barrier is down
// is refused after the read, and nothing is changed on it.
func TestSalvageRefusesAWritableServer(t *testing.T) {
	rec := newRecorder()
	rec.answer(mysqlReadOnlyQuery, []string{"read_only=0", "super_read_only=0"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := recorded(Config{}, mysqlDialect{}, rec).SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306},
		Credentials{User: "repl"}, gtid.MustParseSet(uuidA+":1-12"), gtid.MustParseSet(uuidA+":1-10"), nil)
	if !errors.Is(err, ErrSalvageTargetWritable) {
		t.Fatalf("got %v, want ErrSalvageTargetWritable", err)
	}
	if want := []string{idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, unlockStatement}; !slices.Equal(rec.sent(), want) {
		t.Fatalf("sent %v, want only %v", rec.sent(), want)
	}
}

// TestSalvageStoppedWhenStartAnswersAnError: START REPLICA UNTIL may take
// effect and still answer an error (a lost reply): replication is
// stopped all the same.
func TestSalvageStoppedWhenStartAnswersAnError(t *testing.T) {
	rec := newRecorder()
	rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
	rec.answer("SHOW REPLICA STATUS", mysqlReplicaRow)
	rec.answer(mysqlExecutedQuery, []string{"gtid_executed=" + uuidA + ":1-10"})
	start := "START REPLICA UNTIL SQL_AFTER_GTIDS = ?"
	rec.errs[start] = []error{errors.New("invalid connection")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := recorded(Config{}, mysqlDialect{}, rec).SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306},
		Credentials{User: "repl"}, gtid.MustParseSet(uuidA+":1-12"), gtid.MustParseSet(uuidA+":1-10"), nil)
	sent := rec.sent()
	if err == nil || len(sent) < 2 || sent[len(sent)-2] != "STOP REPLICA" {
		t.Fatalf("err %v, sent %v; want an error and STOP REPLICA after the failed start", err, sent)
	}
}

// TestSalvageRefusesAMovedTarget: under the topology lock, a target whose
// executed set is not the one its caller read, or whose replication no
// longer comes from the salvage's source (a new leader promoted it since,
// maybe fenced again), is refused before anything on it is changed.
func TestSalvageRefusesAMovedTarget(t *testing.T) {
	read := gtid.MustParseSet(uuidA + ":1-10")
	cases := []struct {
		name     string
		executed string
		replica  []string // nil: no replication configured
		want     []string
	}{
		{"its executed set grew (its own writes)", uuidA + ":1-10," + uuidB + ":1", mysqlReplicaRow,
			[]string{idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, mysqlExecutedQuery, unlockStatement}},
		{"its replication was reset (promoted)", uuidA + ":1-10", nil,
			[]string{idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, mysqlExecutedQuery,
				"SHOW REPLICA STATUS", unlockStatement}},
		{"it replicates from another source", uuidA + ":1-10", []string{"Source_Host=db-c", "Source_Port=3306",
			"Replica_IO_Running=Yes", "Replica_SQL_Running=Yes", "Auto_Position=1"},
			[]string{idleSent, lockSent, "SET SESSION lock_wait_timeout = ? [1]", mysqlReadOnlyQuery, mysqlExecutedQuery,
				"SHOW REPLICA STATUS", unlockStatement}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(mysqlReadOnlyQuery, []string{"read_only=1", "super_read_only=1"})
			rec.answer(mysqlExecutedQuery, []string{"gtid_executed=" + tc.executed})
			if tc.replica != nil {
				rec.answer("SHOW REPLICA STATUS", tc.replica)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := recorded(Config{}, mysqlDialect{}, rec).SalvageFrom(ctx, Endpoint{Host: "db-a", Port: 3306},
				Credentials{User: "repl"}, gtid.MustParseSet(uuidA+":1-12"), read, nil)
			if !errors.Is(err, ErrSalvageTargetMoved) {
				t.Fatalf("got %v, want ErrSalvageTargetMoved", err)
			}
			if !slices.Equal(rec.sent(), tc.want) {
				t.Fatalf("sent:\n  %s\nwant only:\n  %s", strings.Join(rec.sent(), "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
