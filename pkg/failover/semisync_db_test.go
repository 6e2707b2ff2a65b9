//go:build db

package failover

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// ConfigureSemiSync sets the site's part, as the poll loop's connections do.
func (s sqlSites) ConfigureSemiSync(ctx context.Context, r topology.SemiSyncRole) error {
	return s.in[r.Site].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Source: r.Source,
		Replica: r.Replica, Timeout: r.Timeout, WaitCount: r.WaitCount})
}

// TestEmergencyPromotionFirstCommitWaits runs an emergency failover from
// a to b on real MariaDB with dataDurability required, and no pass after
// it: b's very first commit is acknowledged by a replica (c, which was no
// semi-sync replica before the failover and is repointed at b with its
// replica part), never committed without one; and with c's IO thread
// stopped, b's next commit waits until it resumes.
func TestEmergencyPromotionFirstCommitWaits(t *testing.T) {
	s := openSites(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Before: a is the source, b its only acknowledging replica.
	for site, set := range map[string]mysql.SemiSyncSettings{"a": {Source: true, Timeout: time.Hour}, "b": {Replica: true}} {
		if err := s.in[site].(mysql.SemiSyncer).ConfigureSemiSync(ctx, set); err != nil {
			t.Fatalf("%s: %v", site, err)
		}
	}

	w := newWorld(t)
	w.addSite("c")
	for _, n := range w.order {
		w.sites[n].executed = gtid.Set{} // the real servers' sets decide nothing here
	}
	primarySeenDownButSQLAnswers(w)
	w.semiSync = semiSyncSpec(true, true)
	env := w.env()
	env.DB = s
	out, err := NewEmergency(env).Advance(ctx, w.pass())
	if err != nil || !out.Completed || w.persisted.Status.ActiveSite != "b" {
		t.Fatalf("failover: %+v, %v, active %q", out, err, w.persisted.Status.ActiveSite)
	}
	before := mustStatus(ctx, t, s.in["b"]).SemiSync
	if !before.SourceEnabled {
		t.Fatalf("b is writable and not the semi-sync source: %+v", before)
	}

	app, err := sql.Open("mysql", s.c.AppDSN(1))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	first := commitAsync(app, "CREATE TABLE t (id INT PRIMARY KEY)")
	select {
	case err := <-first:
		if err != nil {
			t.Fatalf("b's first commit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b's first commit found no replica to acknowledge it")
	}
	after := mustStatus(ctx, t, s.in["b"]).SemiSync
	if after.SourceNoTx != before.SourceNoTx || after.SourceYesTx <= before.SourceYesTx {
		t.Fatalf("b's counters before %+v, after %+v: want its first commit acknowledged", before, after)
	}

	op, err := sql.Open("mysql", s.c.OperatorDSN(2))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if _, err := op.ExecContext(ctx, "STOP SLAVE IO_THREAD"); err != nil {
		t.Fatal(err)
	}
	next := commitAsync(app, "INSERT INTO t VALUES (1)")
	select {
	case err := <-next:
		t.Fatalf("a commit returned with no replica to acknowledge it (err %v)", err)
	case <-time.After(2 * time.Second):
	}
	if _, err := op.ExecContext(ctx, "START SLAVE IO_THREAD"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-next:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the commit did not return after c resumed")
	}
	if end := mustStatus(ctx, t, s.in["b"]).SemiSync; end.SourceNoTx != before.SourceNoTx {
		t.Fatalf("b committed without an acknowledgement: %+v", end)
	}
}

// commitAsync runs q and reports when it returned.
func commitAsync(db *sql.DB, q string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(context.Background(), q)
		done <- err
	}()
	return done
}
