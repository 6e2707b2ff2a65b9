//go:build db

package mysql_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/internal/testbed"
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

// A server about to be promoted whose replication points at a source that
// is gone (a closed port: its IO thread keeps reconnecting) takes its
// source part promptly, without its IO thread restarted, and Promote after
// it completes promptly; its first commit then waits for an
// acknowledgement (required), and returns once a replica acknowledges it.
func TestSemiSyncPromotingFromUnreachableSource(t *testing.T) {
	s := startSites(t, 2, testbed.WithoutReplication())
	ctx := ctxFor(t, 60*time.Second)
	mustExec(t, s.db(t, 0, false), "CREATE TABLE app.t (id INT PRIMARY KEY)")
	gone := mysql.Endpoint{Host: "127.0.0.1", Port: closedPort(t)}
	if err := s.in[0].ReplicateFrom(ctx, gone, s.repl()); err != nil {
		t.Fatalf("replicate from a closed port: %v", err)
	}
	if err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: true}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the IO thread retries the closed port", func() bool {
		rs := s.status(t, 0).Replica
		return rs != nil && rs.IORunning != mysql.ThreadNo
	})
	start := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(pctx, mysql.SemiSyncSettings{Source: true, Timeout: time.Hour,
		Promoting: true})
	if err != nil {
		t.Fatalf("source part before promotion: %v", err)
	}
	if rs := s.status(t, 0).Replica; rs != nil && (rs.IORunning != mysql.ThreadNo || rs.SQLRunning) {
		t.Fatalf("replication still runs after the source part of a promotion: %+v", rs)
	}
	if _, err := s.in[0].Promote(pctx, mysql.PromoteOptions{}); err != nil {
		t.Fatalf("promote: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("source part and promotion took %s", took)
	}
	done := insertAsync(t, s, 1)
	select {
	case err := <-done:
		t.Fatalf("a commit returned with no replica to acknowledge it (err %v)", err)
	case <-time.After(2 * time.Second):
	}
	if err := s.in[1].(mysql.SemiSyncer).ConfigureSemiSync(ctx, mysql.SemiSyncSettings{Replica: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.in[1].ReplicateFrom(ctx, s.endpoint(0), s.repl()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the commit did not return once a replica acknowledged")
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}
