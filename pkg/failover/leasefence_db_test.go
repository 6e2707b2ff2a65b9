//go:build db

package failover

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// sqlSites is DB over real servers by site name, as the poll loop's
// connections are (pkg/grouploop conns), without a resolver.
type sqlSites struct {
	c     *testbed.MariaDBCluster
	index map[string]int
	in    map[string]mysql.Instance
}

func (s sqlSites) Fence(ctx context.Context, site string) error { return s.in[site].Fence(ctx) }

func (s sqlSites) DrainRelayLog(ctx context.Context, site string, timeout time.Duration) error {
	if err := s.in[site].DrainRelayLog(ctx, timeout); err != nil && !errors.Is(err, mysql.ErrNotReplica) {
		return err
	}
	return nil
}

func (s sqlSites) Promote(ctx context.Context, site string, opts PromoteOptions) (Promotion, error) {
	mo := mysql.PromoteOptions{SemiSyncBestEffort: opts.SemiSyncBestEffort}
	if r := opts.SemiSync; r != nil {
		mo.SemiSync = &mysql.SemiSyncSettings{Source: r.Source, Replica: r.Replica, Timeout: r.Timeout, WaitCount: r.WaitCount}
	}
	pr, err := s.in[site].Promote(ctx, mo)
	return Promotion{Executed: pr.Executed, Retrieved: pr.Retrieved, RetrievedUnknown: pr.RetrievedUnknown}, err
}

func (s sqlSites) ReplicateFrom(ctx context.Context, site, source string) error {
	r := s.c.Accounts.Replication
	return s.in[site].ReplicateFrom(ctx, mysql.Endpoint{Host: testbed.Host, Port: s.c.Port(s.index[source])},
		mysql.Credentials{User: r.User, Password: r.Password})
}

// ArmLeaseFence: a lock wait on a write hold is ErrWritesHeld, as the
// poll loop's connections say it.
func (s sqlSites) ArmLeaseFence(ctx context.Context, site string, after time.Duration) error {
	err := s.in[site].ArmLeaseFence(ctx, after)
	if errors.Is(err, mysql.ErrWritesHeld) {
		return fmt.Errorf("%w: %w", ErrWritesHeld, err)
	}
	return err
}

// openSites starts n servers (a, b, ...) and opens the operator's Instance on each.
func openSites(t *testing.T, n int, opts ...testbed.MariaDBOption) sqlSites {
	c := testbed.StartMariaDB(t, n, opts...)
	s := sqlSites{c: c, index: map[string]int{}, in: map[string]mysql.Instance{}}
	for i := range n {
		site := string(rune('a' + i))
		in, err := mysql.Open(mysql.Config{Addr: c.Addr(i), User: c.Accounts.Operator.User,
			Password: c.Accounts.Operator.Password, SystemUsers: []string{c.Accounts.Replication.User}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Close() })
		s.index[site], s.in[site] = i, in
	}
	return s
}

// TestPromotionArmsTheLeaseFence runs the emergency promotion of b (a
// read-only replica) on real MariaDB, as the operator's account: b is made
// writable with its lease fence armed for the time counted from its
// sidecar's last ask (lease 8 s, peerCheckInterval 2 s, the arm's timeout
// 2 s, asked just now: 7 s); nobody pushes it later (its sidecar paused
// after asking), so it fences b when its time is up. Nothing reaches the
// binlog.
func TestPromotionArmsTheLeaseFence(t *testing.T) {
	s := openSites(t, 2)
	c := s.c
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := s.in["b"].Status(ctx)
	if err != nil || before.Writable() {
		t.Fatalf("b before: writable %v, err %v", before.Writable(), err)
	}

	w := newWorld(t)
	w.persisted.Spec.Sidecar.LeaseTimeout = metav1.Duration{Duration: 8 * time.Second}
	w.persisted.Spec.Sidecar.PeerCheckInterval = metav1.Duration{Duration: 2 * time.Second}
	w.asked = map[string]time.Duration{"a": 0, "b": 0}
	primarySeenDownButSQLAnswers(w)
	env := w.env()
	env.DB = s
	armed := time.Now()
	out, err := NewEmergency(env).Advance(ctx, w.pass())
	if err != nil || !out.Completed {
		t.Fatalf("promotion: %+v, %v", out, err)
	}
	for site, writable := range map[string]bool{"a": false, "b": true} {
		if st, err := s.in[site].Status(ctx); err != nil || st.Writable() != writable {
			t.Fatalf("%s writable %v (err %v), want %v", site, st.Writable(), err, writable)
		}
	}

	db, err := sql.Open("mysql", c.OperatorDSN(1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status, zone string
	var left int
	err = db.QueryRowContext(ctx, "SELECT STATUS, TIME_ZONE, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), STARTS) "+
		"FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'bloodraven' AND EVENT_NAME = 'lease_fence'").Scan(&status, &zone, &left)
	if err != nil {
		t.Fatalf("read the event: %v", err)
	}
	if elapsed := int(time.Since(armed) / time.Second); status != "ENABLED" || zone != "+00:00" || left > 7 || left < 7-elapsed-1 {
		t.Fatalf("event %s in zone %s, due in %d s (%d s after the arm): want enabled, due in 7 s less the time since", status, zone, left, elapsed)
	}

	app, err := sql.Open("mysql", c.AppDSN(1))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, err := app.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("b takes writes after its promotion: %v", err)
	}
	for !mustStatus(ctx, t, s.in["b"]).Fenced() {
		if time.Since(armed) > 7*time.Second+3*time.Second {
			t.Fatalf("b still writable %s after the arm", time.Since(armed).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("b fenced itself %s after the arm", time.Since(armed).Round(10*time.Millisecond))
	if took := time.Since(armed); took < 5*time.Second {
		t.Fatalf("fenced %s after the arm: before its time", took)
	}
	var me *gomysql.MySQLError
	if _, err := app.ExecContext(ctx, "INSERT INTO t VALUES (1)"); !errors.As(err, &me) || me.Number != 1290 {
		t.Fatalf("app write after the lease fence: %v, want error 1290", err)
	}
	// The application's CREATE TABLE, and nothing of the arm or the promotion.
	after := mustStatus(ctx, t, s.in["b"])
	if grew := after.Executed.Subtract(before.Executed); !after.Executed.Contains(before.Executed) || grew.Count() != 1 {
		t.Fatalf("executed %s, was %s: the arm or the promotion reached the binlog", after.Executed, before.Executed)
	}
}

func mustStatus(ctx context.Context, t *testing.T, in mysql.Instance) mysql.Status {
	t.Helper()
	st, err := in.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPromotionUnderTheSidecarsWriteHold: a fenced site that does not
// replicate is under its sidecar's write hold (a global read lock), which
// the event's DDL waits for. The arm gives up after its second of lock
// wait and the promotion goes on: no write commits while the hold stays,
// and the sidecar that lets go arms the event itself.
func TestPromotionUnderTheSidecarsWriteHold(t *testing.T) {
	s := openSites(t, 2, testbed.WithoutReplication())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hold, err := s.in["b"].HoldWrites(ctx)
	if err != nil {
		t.Fatalf("hold: %v", err)
	}
	defer hold.Release()
	began := time.Now()
	out, err := promoteB(ctx, t, s)
	if err != nil || !out.Completed {
		t.Fatalf("promotion under the hold: %+v, %v", out, err)
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Fatalf("the promotion took %s: the arm waited past its lock wait", took)
	}
	if st := mustStatus(ctx, t, s.in["b"]); !st.Writable() {
		t.Fatal("b not made writable")
	}
	app, err := sql.Open("mysql", s.c.AppDSN(1))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	_, err = app.ExecContext(wctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	wcancel()
	if err == nil {
		t.Fatal("a write committed under the hold")
	}
	hold.Release()
	if _, err := app.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("write once the hold is gone: %v", err)
	}
}

// TestPromotionUnderABackupLockRefused: a backup's lock (MariaDB's BACKUP
// STAGE BLOCK_DDL) makes the arm's DDL wait as the write hold does, but it
// leaves writes free: the promotion must not go on without the arm, or the
// site would write with no lease fence for as long as the backup runs.
func TestPromotionUnderABackupLockRefused(t *testing.T) {
	s := openSites(t, 2, testbed.WithoutReplication())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := sql.Open("mysql", s.c.OperatorDSN(1))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	conn, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"BACKUP STAGE START", "BACKUP STAGE BLOCK_DDL"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "BACKUP STAGE END") }()
	out, err := promoteB(ctx, t, s)
	if out.Completed || !errors.Is(err, ErrLeaseFence) || errors.Is(err, ErrWritesHeld) {
		t.Fatalf("promotion under a backup lock: %+v, %v; want refused with ErrLeaseFence", out, err)
	}
	if st := mustStatus(ctx, t, s.in["b"]); st.Writable() {
		t.Fatal("b made writable with no lease fence armed")
	}
}

// promoteB runs an emergency promotion of b on the real servers s: a's
// mysqld seen down, b's sidecar asked just now (lease 8 s, tick 2 s).
func promoteB(ctx context.Context, t *testing.T, s sqlSites) (Outcome, error) {
	w := newWorld(t)
	w.persisted.Spec.Sidecar.LeaseTimeout = metav1.Duration{Duration: 8 * time.Second}
	w.persisted.Spec.Sidecar.PeerCheckInterval = metav1.Duration{Duration: 2 * time.Second}
	w.asked = map[string]time.Duration{"a": 0, "b": 0}
	w.sites["b"].source = ""
	primarySeenDownButSQLAnswers(w)
	env := w.env()
	env.DB = s
	return NewEmergency(env).Advance(ctx, w.pass())
}
