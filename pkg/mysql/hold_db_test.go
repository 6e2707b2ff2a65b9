//go:build db

package mysql_test

import (
	"testing"

	"github.com/shipstream/bloodraven/pkg/mysql"
	"time"
)

// TestWriteHoldAndTheOperatorsVerbs checks what the sidecar's write hold
// (FLUSH TABLES WITH READ LOCK on a fenced server) does to the operator's
// verbs on that server: Fence, Status and ReplicateFrom must not wait on it
// (the sidecar releases the hold once it sees replication configured), a
// READ_ONLY ADMIN account cannot commit, and Release lets writes through.
func TestWriteHoldAndTheOperatorsVerbs(t *testing.T) {
	s := startSites(t, 2)
	root := s.dbAs(t, 1, s.c.RootDSN(1))
	mustExec(t, root, "STOP REPLICA")
	mustExec(t, root, "RESET REPLICA ALL")
	mustExec(t, root, "CREATE USER 'dba'@'%' IDENTIFIED BY 'dba-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, CREATE ON app.* TO 'dba'@'%'")
	mustExec(t, root, "GRANT READ_ONLY ADMIN ON *.* TO 'dba'@'%'")
	dba := s.dbAs(t, 1, "dba:dba-pw@tcp("+s.c.Addr(1)+")/app?timeout=5s")
	mustExec(t, dba, "CREATE TABLE IF NOT EXISTS h (id INT PRIMARY KEY)")

	hold, err := s.in[1].HoldWrites(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dba.ExecContext(ctxFor(t, time.Second), "INSERT INTO h VALUES (1)"); err == nil {
		t.Fatal("a READ_ONLY ADMIN account committed under the hold")
	}
	for _, v := range []struct {
		name string
		verb func() error
	}{
		{"fence", func() error { return s.in[1].Fence(ctxFor(t, 3*time.Second)) }},
		{"status", func() error { _, err := s.in[1].Status(ctxFor(t, 3*time.Second)); return err }},
		{"promote", func() error { _, err := s.in[1].Promote(ctxFor(t, 3*time.Second), mysql.PromoteOptions{}); return err }},
		{"fence again", func() error { return s.in[1].Fence(ctxFor(t, 3*time.Second)) }},
		{"replicate from", func() error {
			return s.in[1].ReplicateFrom(ctxFor(t, 5*time.Second), s.endpoint(0), s.repl())
		}},
	} {
		start := time.Now()
		if err := v.verb(); err != nil {
			t.Errorf("%s under the hold: %v (after %s)", v.name, err, time.Since(start))
		}
	}
	hold.Release()
	if n := count(t, dba, "SELECT COUNT(*) FROM h"); n != 0 {
		t.Fatalf("%d rows committed under the hold", n)
	}
	if err := hold.Alive(ctxFor(t, time.Second)); err == nil {
		t.Fatal("a released hold is still alive")
	}
}
