//go:build db

package reclone_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// bed: server 0 (iad) is the primary and donor, behind a real sidecar's
// peer handler; server 1 (pdx) is the site recloned, its Executor served
// over mutual TLS.
type bed struct {
	c        *testbed.MariaDBCluster
	pki      pkiBed
	donorURL string
	active   atomic.Value // the view's active site
	reg      *prometheus.Registry
	dir      string // the Executor's state folder
	preserve string
}

type refuseViews struct{}

func (refuseViews) Verify(v1alpha1.ActiveSiteView) error { return errors.New("no keys in this test") }

type noMySQL struct{}

func (noMySQL) Status(context.Context) (mysql.Status, error) {
	return mysql.Status{}, errors.New("unused")
}
func (noMySQL) Fence(context.Context) error { return errors.New("unused") }

// siteDB is the site's mysqld as the Executor needs it.
type siteDB struct{ mysql.Instance }

func (s siteDB) SeedPosition(ctx context.Context, pos string) error {
	return s.Instance.(mysql.Cloner).SeedPosition(ctx, pos)
}

// mysqld is the test bed's process control of server i.
type mysqld struct {
	c *testbed.MariaDBCluster
	i int
}

func (m mysqld) Stop(context.Context) error  { m.c.Stop(m.i); return nil }
func (m mysqld) Start(context.Context) error { return m.c.Start(m.i) }

func newBed(t *testing.T) *bed {
	t.Helper()
	for _, bin := range []string{"mariadb-backup", "mbstream"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is needed (make deps installs mariadb-backup): %v", bin, err)
		}
	}
	b := &bed{c: testbed.StartMariaDB(t, 2, testbed.WithSkipSlaveStart()), pki: newPKI(t), reg: prometheus.NewRegistry()}
	b.active.Store("iad")
	b.dir = filepath.Join(t.TempDir(), "reclone")
	// The preservation root sits next to the datadir: the same file system.
	b.preserve = filepath.Join(filepath.Dir(b.c.DataDir(1)), "preserved")
	donor := &clone.Donor{DefaultsFile: b.c.ConfigFile(0), Socket: b.c.Socket(0), User: "root",
		TempDir: t.TempDir(), Timeout: 5 * time.Minute, Logger: quiet()}
	src := b.pki.source(t, iad)
	r, err := sidecar.NewRunner(sidecar.Config{
		Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
			LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: refuseViews{}},
		OperatorURL: "https://127.0.0.1:1", Logger: quiet(), TLS: src, Clone: donor}, noMySQL{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.donorURL = serveTLS(t, src, r.PeerHandler()) + clone.PathClone
	return b
}

// executor is pdx's sidecar end, as a fresh process would build it.
func (b *bed) executor(t *testing.T) (*reclone.Executor, string) {
	t.Helper()
	a := b.c.Accounts
	in, err := mysql.Open(mysql.Config{Addr: b.c.Addr(1), User: a.Operator.User, Password: a.Operator.Password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	src := b.pki.source(t, pdx)
	e := &reclone.Executor{Namespace: "shop", Group: "orders", Site: "pdx", Dir: b.dir, DataDir: b.c.DataDir(1),
		PreserveRoot: b.preserve, DB: siteDB{in}, Mysqld: mysqld{b.c, 1}, Donors: []string{"iad"}, TLS: src,
		Logger: quiet(), View: func() (string, int64, bool) { return b.active.Load().(string), 5, true },
		Receiver: func(donor string) (*clone.Receiver, error) {
			if donor != "iad" {
				return nil, fmt.Errorf("no donor %s", donor)
			}
			return &clone.Receiver{URL: b.donorURL, Client: httpClient(src, iad), DefaultsFile: b.c.ConfigFile(1),
				Logger: quiet()}, nil
		}}
	h, err := e.Handler(b.reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Wait)
	return e, serveTLS(t, src, h)
}

func (b *bed) client(t *testing.T, id pki.Identity, url string) *reclone.Client {
	return &reclone.Client{URL: func(string, string, string) string { return url }, HTTP: httpClient(b.pki.source(t, id), pdx)}
}

func (b *bed) db(t *testing.T, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", b.c.RootDSN(i))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q[:min(len(q), 80)], err)
	}
}

func seed(t *testing.T, db *sql.DB, from, rows int) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE IF NOT EXISTS app.t (id BIGINT PRIMARY KEY, v VARCHAR(64) NOT NULL) ENGINE=InnoDB")
	for done := 0; done < rows; done += 500 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO app.t (id, v) VALUES ")
		for j := range min(500, rows-done) {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, MD5(%d))", from+done+j, from+done+j)
		}
		mustExec(t, db, sb.String())
	}
}

func checksum(t *testing.T, db *sql.DB) string {
	t.Helper()
	var table, sum sql.NullString
	if err := db.QueryRow("CHECKSUM TABLE app.t").Scan(&table, &sum); err != nil {
		t.Fatal(err)
	}
	return sum.String
}

func (b *bed) converge(t *testing.T) {
	t.Helper()
	want := checksum(t, b.db(t, 0))
	deadline := time.Now().Add(60 * time.Second)
	for checksum(t, b.db(t, 1)) != want {
		if time.Now().After(deadline) {
			t.Fatal("pdx did not converge with iad in 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bed) status(t *testing.T, i int) mysql.Status {
	t.Helper()
	a := b.c.Accounts
	in, err := mysql.Open(mysql.Config{Addr: b.c.Addr(i), User: a.Operator.User, Password: a.Operator.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	st, err := in.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// listing is every path under dir, for "nothing changed".
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// until asks q until it is done, within 5 minutes.
func until(t *testing.T, c *reclone.Client, q reclone.Request) reclone.Answer {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		a, err := c.Do(t.Context(), "shop", "orders", "pdx", q)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", q.Phase, err)
		case a.Failed != "":
			t.Fatalf("%s failed: %s", q.Phase, a.Failed)
		case a.Done:
			return a
		case time.Now().After(deadline):
			t.Fatalf("%s not done in 5 minutes: %+v", q.Phase, a)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRecloneDivergedSite: pdx holds an errant transaction. Refused
// requests (a site's certificate, a stale generation, a malformed phase,
// the donor itself, pdx named active, pdx writable) change nothing on it.
// Then the operator's client drives PreservingData, Cloning and
// CatchingUp: pdx ends read-only at the backup's position, its old datadir
// (errant table included) preserved with the errant set; pointed at iad,
// it holds iad's data, and replicates later writes. A restarted sidecar
// answers Done without redoing anything.
func TestRecloneDivergedSite(t *testing.T) {
	b := newBed(t)
	primary, target := b.db(t, 0), b.db(t, 1)
	mustExec(t, primary, "CREATE DATABASE IF NOT EXISTS app")
	seed(t, primary, 0, 3000)
	b.converge(t)
	mustExec(t, target, "STOP SLAVE")
	mustExec(t, target, "CREATE TABLE app.errant (id INT PRIMARY KEY) ENGINE=InnoDB")
	mustExec(t, target, "INSERT INTO app.errant VALUES (1)")
	seed(t, primary, 3000, 1000) // written while pdx is out
	errant := b.status(t, 1).Executed.Subtract(b.status(t, 0).Executed)
	if errant.IsEmpty() {
		t.Fatal("pdx holds nothing errant")
	}

	_, url := b.executor(t)
	op := b.client(t, pki.OperatorIdentity(), url)
	q := func(phase v1alpha1.RecoveryPhase) reclone.Request {
		return reclone.Request{ID: "pdx:" + errant.String() + "@1", Phase: phase, Donor: "iad",
			DivergentGtid: errant.String(), Generation: 5}
	}
	before := listing(t, b.c.DataDir(1))
	refusals := []struct {
		name   string
		client *reclone.Client
		req    reclone.Request
		setup  func()
		reason string
	}{
		{"a site's certificate", b.client(t, iad, url), q(v1alpha1.RecoveryCloning), nil, reclone.RefuseWrongIdentity},
		{"a stale generation", op, func() reclone.Request { r := q(v1alpha1.RecoveryCloning); r.Generation = 4; return r }(), nil, reclone.RefuseStale},
		{"a phase no site carries out", op, q(v1alpha1.RecoveryRejoined), nil, reclone.RefuseMalformed},
		{"the site as its own donor", op, func() reclone.Request { r := q(v1alpha1.RecoveryCloning); r.Donor = "pdx"; return r }(), nil, reclone.RefuseMalformed},
		{"pdx named active", op, q(v1alpha1.RecoveryPreservingData), func() { b.active.Store("pdx") }, reclone.RefuseActive},
		{"a Cloning never requested", op, q(v1alpha1.RecoveryCloning), func() { b.active.Store("iad"); mustExec(t, target, "SET GLOBAL read_only = OFF") }, reclone.RefuseOtherReclone},
	}
	for _, r := range refusals {
		if r.setup != nil {
			r.setup()
		}
		a, err := r.client.Do(t.Context(), "shop", "orders", "pdx", r.req)
		if !errors.Is(err, reclone.ErrRefused) || a.Reason != r.reason {
			t.Fatalf("%s: %+v, %v; want refused with %s", r.name, a, err, r.reason)
		}
		if n := testutil.ToFloat64(counter(t, b.reg, r.reason)); n < 1 {
			t.Fatalf("%s: not counted", r.name)
		}
	}
	if after := listing(t, b.c.DataDir(1)); !slices.Equal(before, after) {
		t.Fatal("a refused request changed pdx's datadir")
	}
	if _, err := os.Stat(b.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused request left a reclone state: %v", err)
	}
	if st := b.status(t, 1); st.ReadOnly || !st.Executed.Contains(errant) {
		t.Fatalf("a refused request touched pdx: read_only %v, executed %s", st.ReadOnly, st.Executed)
	}
	mustExec(t, target, "SET GLOBAL read_only = ON")

	for _, ph := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryRequested, v1alpha1.RecoveryPreservingData} {
		until(t, op, q(ph))
	}
	// Made writable after its PreservingData, pdx is not cloned over.
	mustExec(t, target, "SET GLOBAL read_only = OFF")
	if a, err := op.Do(t.Context(), "shop", "orders", "pdx", q(v1alpha1.RecoveryCloning)); !errors.Is(err, reclone.ErrRefused) ||
		a.Reason != reclone.RefuseWritable {
		t.Fatalf("pdx writable: %+v, %v; want refused with %s", a, err, reclone.RefuseWritable)
	}
	mustExec(t, target, "SET GLOBAL read_only = ON")
	cloned := until(t, op, q(v1alpha1.RecoveryCloning))
	caught := until(t, op, q(v1alpha1.RecoveryCatchingUp))
	if caught.Position == "" || caught.Position != cloned.Position {
		t.Fatalf("positions: cloning %q, catching up %q", cloned.Position, caught.Position)
	}
	at := cloned.PreservedAt
	if !strings.HasPrefix(filepath.Base(at), "orders-pdx-diverged-") {
		t.Fatalf("preserved at %q", at)
	}
	if set, err := os.ReadFile(filepath.Join(at, "divergent-gtid")); err != nil || strings.TrimSpace(string(set)) != errant.String() {
		t.Fatalf("the preserved errant set: %q, %v", set, err)
	}
	if _, err := os.Stat(filepath.Join(at, "datadir", "app", "errant.frm")); err != nil {
		t.Fatalf("the old datadir's errant table is not preserved: %v", err)
	}
	st := b.status(t, 1)
	// The clone shows the backup's position as its executed set at once,
	// not an empty set until it replicates a transaction.
	if st.GTIDBinlogState != caught.Position || st.Executed.IsEmpty() {
		t.Fatalf("pdx's binlog state %q, executed %s; want the backup's %q", st.GTIDBinlogState, st.Executed, caught.Position)
	}
	if !st.ReadOnly || st.GTIDSlavePos != caught.Position || st.Replica != nil && st.Replica.SQLRunning {
		t.Fatalf("pdx after the clone: read_only %v, slave_pos %q (want %q), replica %+v", st.ReadOnly, st.GTIDSlavePos, caught.Position, st.Replica)
	}

	// What the operator's maintain does next: point pdx at the active site.
	a := b.c.Accounts
	in, err := mysql.Open(mysql.Config{Addr: b.c.Addr(1), User: a.Operator.User, Password: a.Operator.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	if err := in.ReplicateFrom(t.Context(), mysql.Endpoint{Host: testbed.Host, Port: b.c.Port(0)},
		mysql.Credentials{User: a.Replication.User, Password: a.Replication.Password}); err != nil {
		t.Fatal(err)
	}
	seed(t, primary, 4000, 500) // written after the clone
	b.converge(t)
	var n int
	if err := target.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='app' AND TABLE_NAME='errant'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("pdx still has the errant table (%d, %v)", n, err)
	}

	// A restarted sidecar: the same state folder, nothing done again.
	_, url2 := b.executor(t)
	op2 := b.client(t, pki.OperatorIdentity(), url2)
	for _, ph := range []v1alpha1.RecoveryPhase{v1alpha1.RecoveryCloning, v1alpha1.RecoveryCatchingUp} {
		a, err := op2.Do(t.Context(), "shop", "orders", "pdx", q(ph))
		if err != nil || !a.Done || a.Running || a.PreservedAt != at {
			t.Fatalf("%s after a restart: %+v, %v", ph, a, err)
		}
	}
}

func counter(t *testing.T, reg *prometheus.Registry, reason string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != reclone.MetricRefusals {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x"}, func() float64 { return m.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("no %s{reason=%q}", reclone.MetricRefusals, reason)
	return nil
}
