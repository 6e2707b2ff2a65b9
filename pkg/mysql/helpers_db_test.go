//go:build db

package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

func init() {
	// The driver logs every connection a fence kills; the tests expect them.
	_ = gomysql.SetLogger(log.New(io.Discard, "", 0))
}

// sites is a test-bed cluster with an operator Instance per server.
type sites struct {
	c  *testbed.MariaDBCluster
	in []mysql.Instance
}

func startSites(t testing.TB, n int, opts ...testbed.MariaDBOption) *sites {
	t.Helper()
	c := testbed.StartMariaDB(t, n, opts...)
	s := &sites{c: c}
	for i := range n {
		s.in = append(s.in, operatorAt(t, c, c.Addr(i)))
	}
	return s
}

// operatorAt opens an operator Instance on addr (a server or a proxy to one).
func operatorAt(t testing.TB, c *testbed.MariaDBCluster, addr string) mysql.Instance {
	t.Helper()
	a := c.Accounts
	in, err := mysql.Open(mysql.Config{
		Addr: addr, User: a.Operator.User, Password: a.Operator.Password,
		SystemUsers: []string{a.Replication.User, a.Monitor.User},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return in
}

func (s *sites) endpoint(i int) mysql.Endpoint {
	return mysql.Endpoint{Host: testbed.Host, Port: s.c.Port(i)}
}

func (s *sites) repl() mysql.Credentials {
	r := s.c.Accounts.Replication
	return mysql.Credentials{User: r.User, Password: r.Password}
}

// db opens a pool on server i as the application (app schema) or the operator.
func (s *sites) db(t testing.TB, i int, asApp bool) *sql.DB {
	t.Helper()
	dsn := s.c.OperatorDSN(i)
	if asApp {
		dsn = s.c.AppDSN(i)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func (s *sites) status(t testing.TB, i int) mysql.Status {
	t.Helper()
	st, err := s.in[i].Status(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// executed is server i's executed GTID set.
func (s *sites) executed(t testing.TB, i int) gtid.Set { return s.status(t, i).Executed }

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(ctxFor(t, 10*time.Second), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func errno(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func count(t testing.TB, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctxFor(t, 5*time.Second), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// switchover moves the primary role from server from to server to by the
// verbs alone: fence, wait, promote, repoint. It returns how long the target
// took to become writable.
func (s *sites) switchover(ctx context.Context, from, to int) (time.Duration, error) {
	start := time.Now()
	if err := s.in[from].Fence(ctx); err != nil {
		return 0, err
	}
	st, err := s.in[from].Status(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.in[to].WaitForGTID(ctx, st.Executed, 10*time.Second); err != nil {
		return 0, err
	}
	if _, err := s.in[to].Promote(ctx, mysql.PromoteOptions{}); err != nil {
		return 0, err
	}
	writable := time.Since(start)
	return writable, s.in[from].ReplicateFrom(ctx, s.endpoint(to), s.repl())
}

// writers runs n goroutines that insert into app.w on whichever server
// primary() names, recording every acknowledged id with its time.
type writers struct {
	mu    sync.Mutex
	acked []ack
	stop  chan struct{}
	wg    sync.WaitGroup
}

type ack struct {
	id     int64
	server int
	at     time.Time
}

func startWriters(t testing.TB, s *sites, n int, primary func() int) *writers {
	t.Helper()
	mustExec(t, s.db(t, primary(), true), "CREATE TABLE IF NOT EXISTS w (id BIGINT PRIMARY KEY, server INT)")
	dbs := []*sql.DB{s.db(t, 0, true), s.db(t, 1, true)}
	w := &writers{stop: make(chan struct{})}
	var next sync.Mutex
	id := int64(0)
	for range n {
		w.wg.Go(func() {
			for {
				select {
				case <-w.stop:
					return
				default:
				}
				next.Lock()
				id++
				my := id
				next.Unlock()
				p := primary()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := dbs[p].ExecContext(ctx, "INSERT INTO w VALUES (?, ?)", my, p)
				cancel()
				if err != nil {
					time.Sleep(time.Millisecond)
					continue
				}
				w.mu.Lock()
				w.acked = append(w.acked, ack{id: my, server: p, at: time.Now()})
				w.mu.Unlock()
			}
		})
	}
	return w
}

// halt stops the writers and returns what they had acknowledged.
func (w *writers) halt() []ack {
	close(w.stop)
	w.wg.Wait()
	return w.acked
}

func (s *sites) dbAs(t testing.TB, i int, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

type atomicInt struct{ v atomic.Int64 }

func (a *atomicInt) load() int   { return int(a.v.Load()) }
func (a *atomicInt) store(i int) { a.v.Store(int64(i)) }
