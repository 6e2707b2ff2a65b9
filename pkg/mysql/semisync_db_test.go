//go:build db

package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// semiSyncPair makes server 0 a semi-sync source with timeout and server 1
// its acknowledging replica, and waits until the source counts the replica.
func semiSyncPair(t *testing.T, timeout time.Duration) *sites {
	t.Helper()
	s := startSites(t, 2)
	ctx := ctxFor(t, 30*time.Second)
	if err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Source: true, Timeout: timeout}); err != nil {
		t.Fatalf("source: %v", err)
	}
	if err := s.in[1].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: true}); err != nil {
		t.Fatalf("replica: %v", err)
	}
	eventually(t, 10*time.Second, "the source counts its semi-sync replica", func() bool {
		return s.status(t, 0).SemiSync.SourceClients == 1
	})
	mustExec(t, s.db(t, 0, true), "CREATE TABLE t (id INT PRIMARY KEY)")
	return s
}

// insertAsync runs an insert as the application and reports when it returned.
func insertAsync(t *testing.T, s *sites, id int) <-chan error {
	done := make(chan error, 1)
	app := s.db(t, 0, true)
	go func() {
		_, err := app.ExecContext(context.Background(), "INSERT INTO t VALUES (?)", id)
		done <- err
	}()
	return done
}

// Required durability: with the replica's IO thread stopped, a commit does
// not return; it returns, acknowledged, once the replica resumes.
func TestSemiSyncRequiredWaits(t *testing.T) {
	s := semiSyncPair(t, time.Hour)
	before := s.status(t, 0).SemiSync
	if err := <-insertAsync(t, s, 1); err != nil {
		t.Fatal(err)
	}
	op := s.db(t, 1, false)
	mustExec(t, op, "STOP REPLICA IO_THREAD")
	done := insertAsync(t, s, 2)
	select {
	case err := <-done:
		t.Fatalf("a commit returned with no replica to acknowledge it (err %v)", err)
	case <-time.After(2 * time.Second):
	}
	mustExec(t, op, "START REPLICA IO_THREAD")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the commit did not return after the replica resumed")
	}
	after := s.status(t, 0).SemiSync
	if after.SourceNoTx != before.SourceNoTx || after.SourceYesTx < before.SourceYesTx+2 || !after.SourceActive {
		t.Fatalf("counters before %+v, after %+v: want both commits acknowledged, none without", before, after)
	}
}

// Preferred durability: the commit waits out the timeout, returns, and the
// source counts it as committed without an acknowledgement.
func TestSemiSyncPreferredFallsBack(t *testing.T) {
	s := semiSyncPair(t, 500*time.Millisecond)
	before := s.status(t, 0).SemiSync
	mustExec(t, s.db(t, 1, false), "STOP REPLICA IO_THREAD")
	start := time.Now()
	if err := <-insertAsync(t, s, 1); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 400*time.Millisecond || took > 5*time.Second {
		t.Fatalf("the commit took %s with a 500 ms timeout", took)
	}
	after := s.status(t, 0).SemiSync
	if after.SourceNoTx != before.SourceNoTx+1 || after.SourceActive {
		t.Fatalf("counters before %+v, after %+v: want one commit without acknowledgement and the source fallen back", before, after)
	}
}

// A repeat of the same settings sends nothing and keeps replication as it was;
// a former source turned replica stops waiting for acknowledgements.
func TestSemiSyncReconfigure(t *testing.T) {
	s := semiSyncPair(t, time.Hour)
	ctx := ctxFor(t, 30*time.Second)
	if err := s.in[1].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: true}); err != nil {
		t.Fatal(err)
	}
	if st := s.status(t, 0).SemiSync; st.SourceClients != 1 {
		t.Fatalf("after a repeat the source counts %d clients", st.SourceClients)
	}
	if err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: true}); err != nil {
		t.Fatal(err)
	}
	st := s.status(t, 0).SemiSync
	if st.SourceEnabled || !st.ReplicaEnabled {
		t.Fatalf("server 0 as a replica: %+v", st)
	}
}
