package mysql

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// A replica whose applier works through one long transaction (a big
// UPDATE, a bulk load) commits nothing for as long as it takes, so its
// executed set stands still though it is busy. What tells it from a
// stalled applier is its open InnoDB transaction: the replication threads
// run as 'system user', and trx_rows_modified grows while they apply.
// The query is the same on MariaDB and MySQL 8 (information_schema's
// INNODB_TRX and PROCESSLIST).
const applierTrxQuery = "SELECT t.trx_id AS trx_id, t.trx_rows_modified AS rows_modified " +
	"FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id " +
	"WHERE p.USER = 'system user'"

// ApplierWork is what the replication applier threads hold open: their
// InnoDB transactions, and the rows those changed so far.
type ApplierWork struct {
	// Trx names the open transactions (their trx_id, sorted); empty when
	// none is open.
	Trx string
	// Rows is the rows they modified so far, summed.
	Rows int64
}

// ApplierWork implements Instance.
func (in *instance) ApplierWork(ctx context.Context) (ApplierWork, error) {
	var w ApplierWork
	err := in.run(ctx, "applier work", 0, func(ctx context.Context, ex executor, _ dialect) error {
		rows, err := ex.query(ctx, applierTrxQuery)
		if err != nil {
			return fmt.Errorf("applier transactions: %w", err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.str("trx_id"))
			w.Rows += r.integer("rows_modified")
		}
		sort.Strings(ids)
		w.Trx = strings.Join(ids, ",")
		return nil
	})
	return w, err
}
