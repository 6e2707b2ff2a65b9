package standin

import (
	"context"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/mysql"
)

func start(t *testing.T, id uint32) *MySQL {
	t.Helper()
	s, err := StartMySQL(Config{ServerID: id, User: "operator", Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func open(t *testing.T, s *MySQL) mysql.Instance {
	t.Helper()
	in, err := mysql.Open(mysql.Config{Addr: s.Addr(), User: "operator", Password: "secret",
		DialTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return in
}

// TestProbeIsAnswered runs the operator's real status probe (pkg/mysql)
// against a primary and a replica stand-in: every statement it sends is
// known, and what it reads is what the stand-ins hold. A statement the
// probe starts to send that the stand-in does not know fails this test.
func TestProbeIsAnswered(t *testing.T) {
	ctx := context.Background()
	primary, replica := start(t, 1), start(t, 2)
	primary.SetWritable(true)
	if err := primary.Write(42); err != nil {
		t.Fatal(err)
	}
	replica.ReplicateFrom(primary)
	ps, err := open(t, primary).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ps.ReadOnly || ps.ServerID != 1 || ps.GTIDBinlogPos != "0-1-42" || ps.Replica != nil ||
		ps.Executed.String() == "" {
		t.Fatalf("primary status %+v", ps)
	}
	rs, err := open(t, replica).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.ReadOnly || rs.Replica == nil || rs.Replica.SourceHost != "127.0.0.1" || !rs.Replica.SQLRunning ||
		rs.GTIDSlavePos != "0-1-42" || rs.Executed.String() != ps.Executed.String() {
		t.Fatalf("replica status %+v (replica %+v)", rs, rs.Replica)
	}
	for _, s := range []*MySQL{primary, replica} {
		if u := s.Unknown(); len(u) > 0 {
			t.Fatalf("the probe sent statements the stand-in does not know: %q", u)
		}
	}
	if err := replica.Write(1); err == nil {
		t.Fatal("a replica took a write")
	}
}

// TestDownHangAndUnknown: a stand-in that is down refuses the probe, one
// that hangs makes it time out and answers again once released, and a
// statement it does not know is refused and recorded.
func TestDownHangAndUnknown(t *testing.T) {
	ctx := context.Background()
	s := start(t, 1)
	in := open(t, s)
	if _, err := in.Status(ctx); err != nil {
		t.Fatal(err)
	}
	s.SetDown(true)
	if _, err := in.Status(ctx); err == nil {
		t.Fatal("a stand-in that is down answered")
	}
	s.SetDown(false)
	s.SetHang(true)
	begin := time.Now()
	if _, err := in.Status(ctx); err == nil {
		t.Fatal("a hung stand-in answered")
	}
	if waited := time.Since(begin); waited > 5*time.Second {
		t.Fatalf("the probe waited %s on a hung stand-in", waited)
	}
	s.SetHang(false)
	if _, err := in.Status(ctx); err != nil {
		t.Fatalf("after the hang: %v", err)
	}
	if err := in.Fence(ctx); err == nil {
		t.Fatal("a statement the stand-in does not know succeeded")
	}
	if len(s.Unknown()) == 0 {
		t.Fatal("the unknown statement was not recorded")
	}
}

// TestReplicaReportsServiceAndTLS: a replica reports the source address
// and TLS files it is told to, which the operator compares with what it
// would set up; a mismatch would make it repoint the replica.
func TestReplicaReportsServiceAndTLS(t *testing.T) {
	ctx := context.Background()
	primary, replica := start(t, 1), start(t, 2)
	primary.SetWritable(true)
	replica.ReplicateFromAt(primary, "orders-a.ns.svc:3306")
	want := mysql.SourceTLS{CAFile: "/tls/ca.crt", CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key", VerifyServerCert: true}
	replica.SetSourceTLS(SourceTLS{CAFile: want.CAFile, CertFile: want.CertFile, KeyFile: want.KeyFile, Verify: true})
	rs, err := open(t, replica).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rs.Replica
	if r == nil || r.Source() != (mysql.Endpoint{Host: "orders-a.ns.svc", Port: 3306}) || !r.UsesTLS(want) {
		t.Fatalf("replica status %+v", r)
	}
	if u := replica.Unknown(); len(u) > 0 {
		t.Fatalf("the probe sent statements the stand-in does not know: %q", u)
	}
}
