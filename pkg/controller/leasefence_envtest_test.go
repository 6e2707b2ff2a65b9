//go:build envtest

package controller_test

import (
	"database/sql"
	"testing"
	"time"
)

// TestHeldReassertProvesItsLeaseFence: on first start the active site's
// sidecar holds the writes of its fenced mysqld, so the operator's arm of
// the lease fence before the re-assert is refused (the hold), and the
// claim leaves the site's lease fence unproven: its lease deadline would
// confirm nothing. With real sidecars (default timings, a 5 s tick: only
// the promotion's nudge makes the sidecar let go soon) and real MariaDB,
// the operator proves it once the sidecar lets go, and the event is in
// mysqld.
func TestHeldReassertProvesItsLeaseFence(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.useSidecarTimings(defaultSidecarTimings)
	e.createGroup(defaultSidecarTimings.spec(nil))
	e.startOperator()
	e.startSidecars("a", "b")
	e.healthy()
	e.eventually(15*time.Second, "a's lease fence proven", func() bool {
		return !site(e.get(), "a").LeaseFenceUnproven
	})
	if n := e.rootCount("a", "SELECT COUNT(*) FROM information_schema.EVENTS WHERE STATUS = 'ENABLED'"); n < 1 {
		t.Fatalf("a's lease fence proven, but mysqld has %d enabled events", n)
	}
}

// rootCount runs a COUNT query on site's mysqld as root.
func (e *env) rootCount(site, query string) int {
	e.t.Helper()
	db, err := sql.Open("mysql", e.db.RootDSN(e.index(site)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRowContext(e.t.Context(), query).Scan(&n); err != nil {
		e.t.Fatalf("%s on %s: %v", query, site, err)
	}
	return n
}
