package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// row is one result row: column name to value (Valid false for NULL).
type row map[string]sql.NullString

// str is the column's value, "" for NULL or missing.
func (r row) str(col string) string { return r[col].String }

// pick returns the first present column of several spellings (MySQL 8.4's
// Replica_* and Source_* names, MariaDB's Slave_* and Master_*).
func (r row) pick(cols ...string) sql.NullString {
	for _, c := range cols {
		if v, ok := r[c]; ok {
			return v
		}
	}
	return sql.NullString{}
}

func (r row) boolean(col string) bool { return parseBool(r.str(col)) }

func (r row) integer(col string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(r.str(col)), 10, 64)
	return n
}

func parseBool(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// executor is the seam between the verbs and a server: sqlExecutor talks to
// one connection, and the unit tests record what a verb sends.
type executor interface {
	exec(ctx context.Context, query string, args ...any) error
	query(ctx context.Context, query string, args ...any) ([]row, error)
	// discard marks the session never to go back to the pool: its
	// connection is closed when the verb releases it (topolock.go).
	discard()
}

// sqlExecutor runs statements on one dedicated connection, so session
// settings such as lock_wait_timeout hold for the whole sequence. drop,
// when set, is the discard mark its release reads.
type sqlExecutor struct {
	conn *sql.Conn
	drop *atomic.Bool
}

func (e sqlExecutor) discard() {
	if e.drop != nil {
		e.drop.Store(true)
	}
}

func (e sqlExecutor) exec(ctx context.Context, query string, args ...any) error {
	_, err := e.conn.ExecContext(ctx, query, args...)
	return err
}

func (e sqlExecutor) query(ctx context.Context, query string, args ...any) ([]row, error) {
	rows, err := e.conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []row
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("scan %q: %w", query, err)
		}
		r := make(row, len(cols))
		for i, c := range cols {
			r[c] = vals[i]
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// queryOne runs a query that must return exactly one row.
func queryOne(ctx context.Context, ex executor, query string, args ...any) (row, error) {
	rows, err := ex.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("%q returned %d rows, want 1", query, len(rows))
	}
	return rows[0], nil
}

// variables reads SHOW ... VARIABLES/STATUS rows into name -> value.
func variables(rows []row) map[string]string {
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[strings.ToLower(r.str("Variable_name"))] = r.str("Value")
	}
	return out
}
