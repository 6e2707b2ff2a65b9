//go:build db

package failover

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/gtid"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// ConfigureSemiSync sets the site's part, as the poll loop's connections do.
func (s sqlSites) ConfigureSemiSync(ctx context.Context, r topology.SemiSyncRole) error {
	return s.in[r.Site].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Source: r.Source,
		Replica: r.Replica, Timeout: r.Timeout, WaitCount: r.WaitCount, Promoting: r.Promoting})
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
	assertFirstCommitWaits(ctx, t, s)
}

// assertFirstCommitWaits: b was just made writable; its first commit is acknowledged by a replica, and its next waits while
// no replica receives, until c resumes.
func assertFirstCommitWaits(ctx context.Context, t *testing.T, s sqlSites) {
	t.Helper()
	before := mustStatus(ctx, t, s.in["b"]).SemiSync

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

	// Every replica stops receiving (a too, when the failover repointed it).
	ops := map[string]*sql.DB{}
	for i, site := range []string{"a", "c"} {
		if mustStatus(ctx, t, s.in[site]).Replica == nil {
			continue
		}
		op, err := sql.Open("mysql", s.c.OperatorDSN([]int{0, 2}[i]))
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		if _, err := op.ExecContext(ctx, "STOP SLAVE IO_THREAD"); err != nil {
			t.Fatal(err)
		}
		ops[site] = op
	}
	op := ops["c"]
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

// sqlPlanned is PlannedDB over real servers, as the poll loop's
// connections are (pkg/grouploop planned_db.go); what makes a server
// writable or read-only is noted in the fake world w, whose passes the
// planned failover decides on.
type sqlPlanned struct {
	sqlSites
	w *world
}

func (s sqlPlanned) note(site string, writable bool, err error) error {
	if err == nil {
		s.w.sites[site].writable = writable
	}
	return err
}

func (s sqlPlanned) Fence(ctx context.Context, site string) error {
	return s.note(site, false, s.sqlSites.Fence(ctx, site))
}

func (s sqlPlanned) Promote(ctx context.Context, site string, opts PromoteOptions) (Promotion, error) {
	set, err := s.sqlSites.Promote(ctx, site, opts)
	return set, s.note(site, true, err)
}

func (s sqlPlanned) Unfence(ctx context.Context, site string) error {
	return s.note(site, true, s.in[site].Unfence(ctx))
}

func (s sqlPlanned) KillAppConnections(ctx context.Context, site string) (int, error) {
	return s.in[site].KillAppConnections(ctx)
}

func (s sqlPlanned) WaitForGTID(ctx context.Context, site string, set gtid.Set, timeout time.Duration) error {
	err := s.in[site].WaitForGTID(ctx, set, timeout)
	if errors.Is(err, mysql.ErrTimeout) {
		return fmt.Errorf("%w: %w", ErrLagPending, err)
	}
	return err
}

func (s sqlPlanned) Executed(ctx context.Context, site string) (gtid.Set, error) {
	st, err := s.in[site].Status(ctx)
	return st.Executed, err
}

func (s sqlPlanned) CheckReplica(ctx context.Context, site string) error {
	st, err := s.in[site].Status(ctx)
	if err == nil && (st.Replica == nil || st.Replica.Err() != nil) {
		err = fmt.Errorf("%w: %s", ErrNotReplicating, site)
	}
	return err
}

// TestPlannedPromotionFirstCommitWaits: the same after a planned failover
// from a to b, with no pass after it.
func TestPlannedPromotionFirstCommitWaits(t *testing.T) {
	s := openSites(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for site, set := range map[string]mysql.SemiSyncSettings{"a": {Source: true, Timeout: time.Hour}, "b": {Replica: true}} {
		if err := s.in[site].(mysql.SemiSyncer).ConfigureSemiSync(ctx, set); err != nil {
			t.Fatalf("%s: %v", site, err)
		}
	}
	w := newPWorld(t)
	w.addThird(v1alpha1.RolePrimaryCandidate)
	for _, n := range w.order {
		w.sites[n].executed = gtid.Set{}
	}
	w.semiSync = semiSyncSpec(true, true)
	env := w.penv()
	env.DB = sqlPlanned{s, w.world}
	w.m = NewPlanned(env)
	w.annotate("b")
	for range 50 {
		out, err := w.m.Step(ctx, w.pass())
		if err != nil {
			t.Logf("pass: %v", err)
		}
		if b := w.block(); b != nil && b.Phase.Terminal() {
			break
		}
		w.now = w.now.Add(max(out.Next, 10*time.Millisecond))
	}
	if b := w.block(); b == nil || b.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("planned failover: %+v", b)
	}
	assertFirstCommitWaits(ctx, t, s)
}
