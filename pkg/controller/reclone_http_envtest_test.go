//go:build envtest

package controller_test

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/controller"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/reclone"
)

// recloneSites serves, for every site, a clone donor behind its gate and
// the reclone endpoint (pkg/reclone's Executor) over mutual TLS with the
// site's certificate; the Executor checks requests against the view the
// site's real sidecar relays. It returns the operator's Recloner: the real
// HTTP client, presenting the operator's certificate.
func (e *env) recloneSites(t *testing.T) (*controller.HTTPRecloner, string) {
	t.Helper()
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	source := func(id pki.Identity) pki.StaticSource {
		is, err := ca.Issue(pki.Request{Identity: id}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c, err := is.TLS()
		if err != nil {
			t.Fatal(err)
		}
		return pki.StaticSource{Cert: &c, Roots: ca.Pool()}
	}
	serve := func(src pki.Source, h http.Handler) string {
		s := httptest.NewUnstartedServer(h)
		s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(src))
		s.Start()
		t.Cleanup(s.Close)
		return strings.Replace(s.URL, "http://", "https://", 1)
	}
	preserve := filepath.Join(filepath.Dir(e.db.DataDir(0)), "..", "preserved")
	donors, urls := map[string]string{}, map[string]string{}
	log := slog.New(slog.DiscardHandler)
	for i, s := range e.sites {
		src := source(pki.SiteIdentity(e.ns, "orders", s))
		d := &clone.Donor{DefaultsFile: e.db.ConfigFile(i), Socket: e.db.Socket(i), User: "root",
			TempDir: t.TempDir(), Timeout: 5 * time.Minute, Logger: log}
		gate := clone.Gate{TLS: src, Namespace: e.ns, Group: "orders", Site: s, Logger: log}
		donors[s] = serve(src, gate.Wrap(d)) + clone.PathClone
	}
	for i, s := range e.sites {
		src := source(pki.SiteIdentity(e.ns, "orders", s))
		in, err := mysql.Open(mysql.Config{Addr: e.db.Addr(i), User: e.db.Accounts.Operator.User,
			Password: e.db.Accounts.Operator.Password, Flavor: v1alpha1.FlavorMariaDB, DialTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Close() })
		var others []string
		for _, o := range e.sites {
			if o != s {
				others = append(others, o)
			}
		}
		ex := &reclone.Executor{Namespace: e.ns, Group: "orders", Site: s, Dir: filepath.Join(t.TempDir(), "reclone"),
			DataDir: e.db.DataDir(i), PreserveRoot: preserve, DB: siteDB{in}, Mysqld: testbedMysqld{e.db, i},
			Donors: others, TLS: src, Logger: log, View: e.relayedView(s),
			Receiver: func(donor string) (*clone.Receiver, error) {
				return &clone.Receiver{URL: donors[donor], DefaultsFile: e.db.ConfigFile(i), Logger: log,
					Client: &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(src,
						pki.SiteIdentity(e.ns, "orders", donor), time.Now)}}}, nil
			}}
		h, err := ex.Handler(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ex.Wait)
		urls[s] = serve(src, h)
	}
	r := controller.NewHTTPRecloner(func(_, _, site string) string { return urls[site] }, source(pki.OperatorIdentity()))
	return r, preserve
}

// relayedView reads the view site's real sidecar relays to its peers.
func (e *env) relayedView(site string) reclone.View {
	return func() (string, int64, bool) {
		e.mu.Lock()
		url := e.sidecarURLs[site]
		e.mu.Unlock()
		resp, err := http.Get(url + v1alpha1.PathPeerActiveSite)
		if err != nil {
			return "", 0, false
		}
		defer func() { _ = resp.Body.Close() }()
		var v v1alpha1.ActiveSiteView
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
			return "", 0, false
		}
		return v.ActiveSite, v.Generation, true
	}
}

type siteDB struct{ mysql.Instance }

func (s siteDB) SeedPosition(ctx context.Context, pos string) error {
	return s.Instance.(mysql.Cloner).SeedPosition(ctx, pos)
}

type testbedMysqld struct {
	c *testbed.MariaDBCluster
	i int
}

func (m testbedMysqld) Stop(context.Context) error  { m.c.Stop(m.i); return nil }
func (m testbedMysqld) Start(context.Context) error { return m.c.Start(m.i) }

// TestRecloneThroughTheSidecars: the operator drives a diverged site's
// reclone through the real HTTP client and the sites' reclone endpoints:
// c, holding an errant table, is accepted with the exact prefix, its
// errant set and old datadir are preserved, it is cloned from a replica,
// never writable, rejoins with a's data, and replicates a's later writes.
func TestRecloneThroughTheSidecars(t *testing.T) {
	e := newEnvWith(t, []testbed.MariaDBOption{testbed.WithSkipSlaveStart()}, "a", "b", "c")
	e.createGroup(nil)
	e.startSidecars("a", "b", "c")
	rec, _ := e.recloneSites(t)
	e.startOperatorWith(func(d *controller.Deps, _ *controller.Options) { d.Recloner = rec })
	e.healthy()
	e.rootExec("a", "CREATE DATABASE IF NOT EXISTS app")
	e.rootExec("a", "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB")
	for i := range 20 {
		e.rootExec("a", fmt.Sprintf("INSERT INTO app.t VALUES (%d, MD5(%d))", i, i))
	}
	e.eventually(20*time.Second, "c holds a's rows", func() bool { return count(t, e, "c", "app.t") == 20 })
	e.rootExec("c", "STOP SLAVE")
	e.rootExec("c", "CREATE TABLE app.errant (id INT PRIMARY KEY) ENGINE=InnoDB")
	var div string
	e.eventually(20*time.Second, "c marked diverged", func() bool {
		div = site(e.get(), "c").DivergentGtid
		return div != ""
	})
	stopWatch := e.watchNeverWritable("c")
	e.askReclone("c:" + div[:min(len(div), 16)])
	e.eventually(3*time.Minute, "c rejoined", func() bool { return recovery(e.get(), "c").Phase == v1alpha1.RecoveryRejoined })
	if bad := stopWatch(); len(bad) > 0 {
		t.Fatalf("c writable during its reclone: %v", bad)
	}
	r := recovery(e.get(), "c")
	if !strings.Contains(filepath.Base(r.PreservedAt), "orders-c-diverged-") || r.DivergentGtid != div || !r.CloneStarted {
		t.Fatalf("recovery %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(r.PreservedAt, "divergent-gtid")); err != nil || strings.TrimSpace(string(b)) != div {
		t.Fatalf("preserved set %q, %v; want %s", b, err, div)
	}
	if _, err := os.Stat(filepath.Join(r.PreservedAt, "datadir", "app", "errant.frm")); err != nil {
		t.Fatalf("the old datadir is not preserved: %v", err)
	}
	if site(e.get(), "c").DivergentGtid != "" || count(t, e, "c", "information_schema.TABLES WHERE TABLE_NAME='errant'") != 0 {
		t.Fatal("c still diverged after its rejoin")
	}
	e.rootExec("a", "INSERT INTO app.t VALUES (100, 'after')")
	e.eventually(20*time.Second, "c replicates a's later write", func() bool { return count(t, e, "c", "app.t") == 21 })
}

func count(t *testing.T, e *env, s, from string) int {
	t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(s)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + from).Scan(&n); err != nil {
		return -1
	}
	return n
}
