package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// call is one statement a verb sent.
type call struct {
	query string
	args  []any
}

func (c call) String() string {
	if len(c.args) == 0 {
		return c.query
	}
	return fmt.Sprintf("%s %v", c.query, c.args)
}

// recorder is the executor seam for unit tests: it records every statement
// and answers queries with canned rows; errs holds errors to return, in
// order, the next times a statement is sent.
type recorder struct {
	// discarded: the verb marked the session never to be pooled again.
	discarded bool
	calls     []call
	answers   map[string][]row
	errs      map[string][]error
}

// lockSent is the topology lock's query as sent with a lock wait of 1 s;
// idleSent bounds the locking session's idle time before it.
const (
	lockSent = lockQuery + " [" + topologyLockName + " 1]"
	idleSent = lockIdleStatement + " [13]"
)

func (r *recorder) discard() { r.discarded = true }

// newRecorder answers the topology lock as got (topolock.go).
func newRecorder() *recorder {
	r := &recorder{answers: map[string][]row{}, errs: map[string][]error{}}
	r.answer(lockQuery, []string{"got=1"})
	return r
}

func (r *recorder) next(query string, args []any) error {
	r.calls = append(r.calls, call{query: query, args: args})
	if errs := r.errs[query]; len(errs) > 0 {
		r.errs[query] = errs[1:]
		return errs[0]
	}
	return nil
}

func (r *recorder) exec(_ context.Context, query string, args ...any) error {
	return r.next(query, args)
}

func (r *recorder) query(_ context.Context, query string, args ...any) ([]row, error) {
	if err := r.next(query, args); err != nil {
		return nil, err
	}
	return r.answers[query], nil
}

// answer sets the rows a query returns, from "col=value" pairs per row
// (a value of NULL is SQL NULL).
func (r *recorder) answer(query string, rows ...[]string) {
	var out []row
	for _, pairs := range rows {
		rw := row{}
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			rw[k] = sql.NullString{String: v, Valid: v != "NULL"}
		}
		out = append(out, rw)
	}
	r.answers[query] = out
}

func (r *recorder) sent() []string {
	out := make([]string, len(r.calls))
	for i, c := range r.calls {
		out[i] = c.String()
	}
	return out
}

// recorded is an instance whose every session is the recorder.
func recorded(cfg Config, d dialect, rec *recorder) *instance {
	cfg.Addr = "db:3306"
	in := &instance{cfg: cfg.withDefaults(), addr: cfg.Addr, d: d}
	in.session = func(context.Context) (executor, func(), error) { return rec, func() {}, nil }
	return in
}
