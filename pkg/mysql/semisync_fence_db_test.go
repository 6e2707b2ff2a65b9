//go:build db

package mysql_test

import (
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

// A cut-off primary with required durability holds its commits waiting for
// an acknowledgement. Fencing it (read_only, then its application sessions
// killed) must not acknowledge them: the client of a waiting commit gets
// an error, never an OK, and nothing the server does afterwards (its
// source part turned off as it becomes a replica) reaches that client.
func TestSemiSyncFenceFailsWaitingCommit(t *testing.T) {
	s := semiSyncPair(t, time.Hour)
	mustExec(t, s.db(t, 1, false), "STOP REPLICA IO_THREAD")
	done := insertAsync(t, s, 1)
	select {
	case err := <-done:
		t.Fatalf("a commit returned with no replica to acknowledge it (err %v)", err)
	case <-time.After(time.Second):
	}
	start := time.Now()
	if err := s.in[0].Fence(ctxFor(t, 30*time.Second)); err != nil {
		t.Fatalf("fence with a commit waiting for its acknowledgement: %v (after %s)", err, time.Since(start))
	}
	t.Logf("fenced in %s", time.Since(start))
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the fence acknowledged a commit that no replica had")
		}
		t.Logf("the waiting commit failed: %v", err)
	case <-time.After(10 * time.Second):
		// Still waiting: turning the source part off as the server becomes
		// a replica must not acknowledge it either.
		if err := s.in[0].(mysql.SemiSyncer).ConfigureSemiSync(ctxFor(t, 10*time.Second), mysql.SemiSyncSettings{Replica: true}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil {
			t.Fatal("a commit that no replica had was acknowledged once the source part was turned off")
		}
	}
}
