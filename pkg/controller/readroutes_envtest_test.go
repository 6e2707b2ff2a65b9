//go:build envtest

package controller_test

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// routableSites lists the sites whose Pods carry the routable label, the
// one the -replicas and -any Services select on.
func (e *env) routableSites() []string {
	e.t.Helper()
	var pods corev1.PodList
	if err := cp.Client.List(e.t.Context(), &pods, client.InNamespace(e.ns),
		client.MatchingLabels{v1alpha1.LabelRoutable: "true"}); err != nil {
		e.t.Fatal(err)
	}
	var sites []string
	for _, p := range pods.Items {
		sites = append(sites, p.Labels[v1alpha1.LabelSite])
	}
	slices.Sort(sites)
	return sites
}

// TestReadRoutesFollowSiteHealth: through the running operator, an
// administrator-fenced replica leaves the read Services and returns when
// unfenced, a replica whose replication broke leaves them and returns
// once repaired, each move with a ReadRoutingChanged Event.
func TestReadRoutesFollowSiteHealth(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	want := func(what string, sites ...string) {
		e.eventually(15*time.Second, what, func() bool { return slices.Equal(e.routableSites(), sites) })
	}
	want("every site routable", "a", "b", "c")

	e.fenceSites(new("b"))
	want("fenced b out of the read Services", "a", "c")
	e.eventually(5*time.Second, "an Event says why b left", func() bool {
		for _, ev := range e.events(v1alpha1.EventReadRouting) {
			if strings.Contains(ev.Note, "site b left") && strings.Contains(ev.Note, "Fenced") {
				return true
			}
		}
		return false
	})
	e.fenceSites(nil)
	want("unfenced b back", "a", "b", "c")

	// c's applier stops on an error: a row it should insert is there already.
	e.rootExec("a", "CREATE DATABASE IF NOT EXISTS app")
	e.rootExec("a", "CREATE TABLE app.t (id INT PRIMARY KEY) ENGINE=InnoDB")
	want("c still routable after the table arrives", "a", "b", "c")
	e.eventually(10*time.Second, "c holds the table", func() bool {
		return e.rootQueryInt("c", "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='app' AND table_name='t'") == 1
	})
	e.rootExecs("c", "SET SESSION sql_log_bin=0", "INSERT INTO app.t VALUES (1)")
	e.rootExec("a", "INSERT INTO app.t VALUES (1)")
	want("c with a broken applier out of the read Services", "a", "b")
	e.rootExecs("c", "SET SESSION sql_log_bin=0", "DELETE FROM app.t WHERE id = 1")
	e.rootExec("c", "START SLAVE")
	want("repaired c back", "a", "b", "c")
}

// rootExecs runs statements as root on one connection of a site, so that
// session settings hold for the ones after them.
func (e *env) rootExecs(site string, stmts ...string) {
	e.t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(site)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	conn, err := db.Conn(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(e.t.Context(), stmt); err != nil {
			e.t.Fatalf("%s on %s: %v", stmt, site, err)
		}
	}
}

// rootQueryInt reads one integer as root on a site; -1 when it cannot.
func (e *env) rootQueryInt(site, query string) int {
	e.t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(site)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	n := -1
	if err := db.QueryRowContext(e.t.Context(), query).Scan(&n); err != nil {
		return -1
	}
	return n
}
