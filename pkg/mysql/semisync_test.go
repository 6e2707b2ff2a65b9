package mysql

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSemiSyncStatements pins what ConfigureSemiSync sends to each flavor
// from a given state (MySQL 8 cannot be installed here; MariaDB runs the
// verb in the db tier, TestSemiSyncRequiredWaits and friends).
func TestSemiSyncStatements(t *testing.T) {
	mysqlOff := []string{"Variable_name=rpl_semi_sync_source_enabled", "Value=OFF"}
	mysqlReplicaOff := []string{"Variable_name=rpl_semi_sync_replica_enabled", "Value=OFF"}
	mariaOff := [][]string{{"Variable_name=rpl_semi_sync_master_enabled", "Value=OFF"},
		{"Variable_name=rpl_semi_sync_slave_enabled", "Value=OFF"},
		{"Variable_name=rpl_semi_sync_master_timeout", "Value=10000"},
		{"Variable_name=rpl_semi_sync_master_wait_point", "Value=AFTER_COMMIT"}}
	mariaSource := [][]string{{"Variable_name=rpl_semi_sync_master_enabled", "Value=ON"},
		{"Variable_name=rpl_semi_sync_slave_enabled", "Value=OFF"},
		{"Variable_name=rpl_semi_sync_master_timeout", "Value=2000"},
		{"Variable_name=rpl_semi_sync_master_wait_point", "Value=AFTER_SYNC"}}
	replicating := []string{"Slave_IO_Running=Yes", "Slave_SQL_Running=Yes"}
	tests := []struct {
		name    string
		d       dialect
		vars    [][]string
		replica []string // the SHOW REPLICA STATUS row; nil: no replication
		s       SemiSyncSettings
		want    []string
		err     error
	}{
		{"mysql: primary waits for two after sync", mysqlDialect{}, [][]string{mysqlOff, mysqlReplicaOff}, nil,
			SemiSyncSettings{Source: true, Timeout: 30 * time.Second, WaitCount: 2},
			[]string{"SET GLOBAL rpl_semi_sync_source_timeout = 30000",
				"SET GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_SYNC'",
				"SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = 2",
				"SET GLOBAL rpl_semi_sync_source_enabled = ON"}, nil},
		{"mysql: a running replica restarts its IO thread", mysqlDialect{}, [][]string{mysqlOff, mysqlReplicaOff},
			[]string{"Replica_IO_Running=Yes", "Replica_SQL_Running=Yes"}, SemiSyncSettings{Replica: true},
			[]string{"SET GLOBAL rpl_semi_sync_replica_enabled = ON", "STOP REPLICA IO_THREAD", "START REPLICA IO_THREAD"}, nil},
		{"mysql: no plugin", mysqlDialect{}, nil, nil, SemiSyncSettings{Replica: true}, nil, ErrSemiSyncUnavailable},
		{"mariadb: primary", mariadbDialect{}, mariaOff, nil, SemiSyncSettings{Source: true, Timeout: 2 * time.Second},
			[]string{"SET GLOBAL rpl_semi_sync_master_timeout = 2000",
				"SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC'",
				"SET GLOBAL rpl_semi_sync_master_enabled = ON"}, nil},
		{"mariadb: already so, nothing sent", mariadbDialect{}, mariaSource, nil,
			SemiSyncSettings{Source: true, Timeout: 2 * time.Second}, nil, nil},
		{"mariadb: former primary becomes a replica", mariadbDialect{}, mariaSource, replicating,
			SemiSyncSettings{Replica: true},
			[]string{"SET GLOBAL rpl_semi_sync_master_enabled = OFF", "SET GLOBAL rpl_semi_sync_slave_enabled = ON",
				"STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD"}, nil},
		{"mariadb: two acknowledgements refused", mariadbDialect{}, mariaOff, nil,
			SemiSyncSettings{Source: true, Timeout: time.Second, WaitCount: 2}, nil, ErrSemiSyncUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(semiSyncVarsQuery, tc.vars...)
			if tc.replica != nil {
				rec.answer("SHOW REPLICA STATUS", tc.replica)
			}
			err := recorded(Config{User: "bloodraven"}, tc.d, rec).ConfigureSemiSync(context.Background(), tc.s)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var got []string
			for _, q := range rec.sent() {
				if q != semiSyncVarsQuery && q != "SHOW REPLICA STATUS" {
					got = append(got, q)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestSemiSyncTimeoutRequired(t *testing.T) {
	rec := newRecorder()
	err := recorded(Config{User: "bloodraven"}, mariadbDialect{}, rec).ConfigureSemiSync(context.Background(),
		SemiSyncSettings{Source: true})
	if !errors.Is(err, ErrInvalidConfig) || len(rec.sent()) != 0 {
		t.Fatalf("a source without a timeout: err %v, sent %v", err, rec.sent())
	}
}
