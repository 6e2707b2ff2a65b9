package mysql

import (
	"context"
	"slices"
	"testing"
)

// TestApplierWorkStatement: the applier's open transactions are read with
// one statement, the same on MySQL 8 (checked here by statement: it
// cannot be installed) and MariaDB (run in applier_db_test.go).
func TestApplierWorkStatement(t *testing.T) {
	for name, d := range map[string]dialect{"mysql": mysqlDialect{}, "mariadb": mariadbDialect{}} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer(applierTrxQuery, []string{"trx_id=9312", "rows_modified=40"}, []string{"trx_id=9310", "rows_modified=2"})
			w, err := recorded(Config{}, d, rec).ApplierWork(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := "SELECT t.trx_id AS trx_id, t.trx_rows_modified AS rows_modified " +
				"FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id " +
				"WHERE p.USER = 'system user'"
			if !slices.Equal(rec.sent(), []string{want}) || w != (ApplierWork{Trx: "9310,9312", Rows: 42}) {
				t.Fatalf("sent %v, read %+v", rec.sent(), w)
			}
		})
	}
}
