//go:build db

package failover

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// SalvageRead reads site as the poll loop's connections do.
func (s sqlSites) SalvageRead(ctx context.Context, site string) (bool, gtid.Set, error) {
	st, err := s.in[site].Status(ctx)
	if err != nil {
		return false, gtid.Set{}, err
	}
	return st.Fenced(), st.Executed, nil
}

// RelayRead reads site's replication as the poll loop's connections do.
func (s sqlSites) RelayRead(ctx context.Context, site string) (topology.RelayRead, error) {
	st, err := s.in[site].Status(ctx)
	if err != nil {
		return topology.RelayRead{}, err
	}
	r := topology.RelayRead{Executed: st.Executed, Uptime: st.Uptime}
	if rs := st.Replica; rs != nil {
		if r.Retrieved, err = rs.RetrievedSet(st.Flavor); err != nil {
			return topology.RelayRead{}, err
		}
		r.Applying = rs.SQLRunning && rs.LastSQLErrno == 0
	}
	return r, nil
}

// Salvage reads source's fence again right before, as the poll loop's
// connections do, and salvages site from it with the replication account.
func (s sqlSites) Salvage(ctx context.Context, site, source string, until, expect gtid.Set,
	part *topology.SemiSyncRole) (gtid.Set, error) {
	st, err := s.in[source].Status(ctx)
	if err != nil {
		return gtid.Set{}, err
	}
	if !st.Fenced() {
		return gtid.Set{}, fmt.Errorf("salvage from %s: %w", source, ErrSalvageSourceWritable)
	}
	var ms *mysql.SemiSyncSettings
	if part != nil {
		ms = &mysql.SemiSyncSettings{Source: part.Source, Replica: part.Replica, Timeout: part.Timeout, WaitCount: part.WaitCount}
	}
	r := s.c.Accounts.Replication
	return s.in[site].SalvageFrom(ctx, mysql.Endpoint{Host: testbed.Host, Port: s.c.Port(s.index[source])},
		mysql.Credentials{User: r.User, Password: r.Password}, until, expect, ms)
}

// TestEmergencySalvageOnMariaDB runs the emergency promotion of b on real
// MariaDB: a (the primary) wrote rows 2 and 3 that b never received, and
// restarted (its my.cnf says read_only: it is back fenced) while the
// debouncer still holds it unreachable. b takes the tail from a's binlogs
// before it is made writable, and nothing is lost. A b that holds a write
// of its own (an errant write) is refused the tail, and is promoted
// without it: the tail is counted lost.
func TestEmergencySalvageOnMariaDB(t *testing.T) {
	for _, tc := range []struct {
		name     string
		errant   bool
		rows     int
		salvaged int64
		lost     int64
		event    string
	}{
		{name: "tail taken", rows: 3, salvaged: 2, lost: 0, event: v1alpha1.EventTailSalvaged},
		{name: "diverging target refused", errant: true, rows: 1, salvaged: 0, lost: 2, event: v1alpha1.EventSalvageRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openSites(t, 2)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			app := openDB(t, s.c.AppDSN(0))
			mustExecDB(ctx, t, app, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
			if err := s.in["b"].WaitForGTID(ctx, mustStatus(ctx, t, s.in["a"]).Executed, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := s.in["b"].StopReplication(ctx); err != nil {
				t.Fatal(err)
			}
			mustExecDB(ctx, t, app, "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
			if tc.errant {
				mustExecDB(ctx, t, openDB(t, s.c.OperatorDSN(1)), "INSERT INTO app.t VALUES (100)")
			}
			if err := s.c.Restart(0); err != nil {
				t.Fatal(err)
			}

			w := newWorld(t)
			w.persisted.Spec.Failover.SalvageTimeout = &metav1.Duration{Duration: 10 * time.Second}
			salvageInFlight(w)
			w.sites["a"].executed = mustStatus(ctx, t, s.in["a"]).Executed
			w.sites["b"].executed = mustStatus(ctx, t, s.in["b"]).Executed
			env := w.env()
			env.DB = s
			out, err := NewEmergency(env).Advance(ctx, w.pass())
			if err != nil || !out.Completed {
				t.Fatalf("failover: %+v, %v", out, err)
			}
			a, b := mustStatus(ctx, t, s.in["a"]), mustStatus(ctx, t, s.in["b"])
			if !a.Fenced() || !b.Writable() {
				t.Fatalf("a fenced %v, b writable %v; want a fenced and b the writer", a.Fenced(), b.Writable())
			}
			var n int
			if err := openDB(t, s.c.AppDSN(1)).QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE id < 100").Scan(&n); err != nil || n != tc.rows {
				t.Fatalf("b holds %d of a's rows (err %v), want %d", n, err, tc.rows)
			}
			st := &w.persisted.Status
			if !AccountLoss(st, a.Executed) {
				t.Fatal("loss not accounted once a is read")
			}
			if lf := st.LastFailover; lf.SalvagedTransactions != tc.salvaged || *lf.TransactionsLost != tc.lost {
				t.Fatalf("salvaged %d lost %d (%s), want %d and %d", lf.SalvagedTransactions, *lf.TransactionsLost,
					lf.LostGtidSet, tc.salvaged, tc.lost)
			}
			if !slices.Contains(w.events, tc.event) {
				t.Fatalf("events %v, want %s", w.events, tc.event)
			}
		})
	}
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExecDB(ctx context.Context, t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
