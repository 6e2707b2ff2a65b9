//go:build db

package routing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/certreload"
	"github.com/shipstream/bloodraven/pkg/mysql"
)

// tlsSite is one MariaDB booted the way a site's Pod boots it: enforced
// settings, the rendered init SQL (replication account REQUIRE X509) and
// the rendered TLS lines pointing at the site's certificate files.
type tlsSite struct {
	db    *testbed.MariaDBCluster
	files TLSFiles
	dir   string
	op    mysql.Instance // the operator's connection: TCP, TLS, CA-checked
}

func bootTLSSite(t *testing.T, ca *testCA, site string, creds Credentials, spec v1alpha1.MySQLTLSSpec) *tlsSite {
	t.Helper()
	dir := t.TempDir()
	files, _ := ca.writeSiteTLS(t, dir, site)
	initFile := filepath.Join(dir, "init.sql")
	writeInit(t, initFile, creds)
	lines := append(EnforcedSettings(v1alpha1.FlavorMariaDB, site), "init_file="+initFile)
	lines = append(lines, TLSSettings(files, spec)...)
	tb := testbed.Accounts{
		Operator: testbed.Account{User: "tb-operator", Password: "x1"}, Replication: testbed.Account{User: "tb-repl", Password: "x2"},
		Application: testbed.Account{User: "tb-app", Password: "x3"}, Monitor: testbed.Account{User: "tb-monitor", Password: "x4"},
	}
	db := testbed.StartMariaDB(t, 1, testbed.WithoutReplication(), testbed.WithAccounts(tb), testbed.WithConfig(lines...))
	op, err := mysql.Open(mysql.Config{Addr: db.Addr(0), User: creds.Operator.Username, Password: creds.Operator.Password,
		Flavor: v1alpha1.FlavorMariaDB, TLS: &mysql.ClientTLS{CA: ca.pem}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Close() })
	return &tlsSite{db: db, files: files, dir: dir, op: op}
}

func (s *tlsSite) endpoint() mysql.Endpoint {
	return mysql.Endpoint{Host: testbed.Host, Port: s.db.Port(0)}
}

// sourceTLS is what a replica at s presents to its source.
func (s *tlsSite) sourceTLS() mysql.SourceTLS {
	return mysql.SourceTLS{CAFile: s.files.CA, CertFile: s.files.Cert, KeyFile: s.files.Key, VerifyServerCert: true}
}

// login connects as a over TCP with tc (nil: no TLS) and returns the
// server's error number (0 on success) and the serial of the certificate
// the server showed, if any.
func login(t *testing.T, addr string, a Account, tc *tls.Config) (uint16, *big.Int) {
	t.Helper()
	var served *big.Int
	mc := gomysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd, mc.Timeout = "tcp", addr, a.Username, a.Password, 5*time.Second
	if tc != nil {
		tc = tc.Clone()
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			served = cs.PeerCertificates[0].SerialNumber
			return nil
		}
		mc.TLS = tc
	}
	conn, err := gomysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = db.PingContext(ctx)
	var me *gomysql.MySQLError
	switch {
	case err == nil:
		return 0, served
	case errors.As(err, &me):
		return me.Number, served
	}
	t.Fatalf("login %s as %s: %v", addr, a.Username, err)
	return 0, nil
}

// clientTLS trusts ca; with files, it also presents that site certificate.
func clientTLS(t *testing.T, ca *testCA, files *TLSFiles) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	tc := &tls.Config{RootCAs: pool, ServerName: testbed.Host}
	if files != nil {
		pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// replicated writes a row on src as the application account and waits
// until dst has applied it.
func replicated(t *testing.T, src, dst *tlsSite, creds Credentials, stmt string) {
	t.Helper()
	app := open(t, src.db, creds.Application, creds.AppDatabase)
	if n := execErr(t, app, stmt); n != 0 {
		t.Fatalf("%s on the source: error %d", stmt, n)
	}
	st, err := src.op.Status(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.op.WaitForGTID(ctxT(t), st.Executed, 15*time.Second); err != nil {
		t.Fatalf("replica did not apply %q: %v", stmt, err)
	}
}

// binlogDumpIDs lists the source's replication sessions by id.
func binlogDumpIDs(t *testing.T, s *tlsSite, creds Credentials) []string {
	t.Helper()
	db := open(t, s.db, creds.Operator, "")
	rows, err := db.QueryContext(ctxT(t), "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func healthyTLSReplica(t *testing.T, r *tlsSite) *mysql.ReplicaStatus {
	t.Helper()
	st, err := r.op.Status(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Replica == nil || !st.Replica.Healthy() || !st.Replica.UsesTLS(r.sourceTLS()) {
		t.Fatalf("want healthy replication over TLS, got %+v", st.Replica)
	}
	return st.Replica
}

// TestReplicationOverTLS: two sites with certificates from one CA; the
// replica logs in with its own certificate, the replication password alone
// is refused, and a certificate rotated with FLUSH SSL is served to new
// sessions while the running replication session carries on.
func TestReplicationOverTLS(t *testing.T) {
	creds := testCredentials()
	ca := newTestCA(t, "bloodraven test CA")
	iad := bootTLSSite(t, ca, "iad", creds, v1alpha1.MySQLTLSSpec{})
	pdx := bootTLSSite(t, ca, "pdx", creds, v1alpha1.MySQLTLSSpec{})
	if err := iad.op.Unfence(ctxT(t)); err != nil {
		t.Fatalf("operator over TLS: %v", err)
	}
	repl := mysql.Credentials{User: creds.Replication.Username, Password: creds.Replication.Password, TLS: pdx.sourceTLS()}
	if err := pdx.op.ReplicateFrom(ctxT(t), iad.endpoint(), repl); err != nil {
		t.Fatal(err)
	}
	replicated(t, iad, pdx, creds, "CREATE TABLE t (id INT PRIMARY KEY)")
	healthyTLSReplica(t, pdx)

	t.Run("the replication account needs a certificate from the CA", func(t *testing.T) {
		addr := iad.db.Addr(0)
		if n, _ := login(t, addr, creds.Replication, nil); n != 1045 {
			t.Errorf("plain login with the replication password: error %d, want 1045", n)
		}
		if n, _ := login(t, addr, creds.Replication, clientTLS(t, ca, nil)); n != 1045 {
			t.Errorf("TLS login without a client certificate: error %d, want 1045", n)
		}
		if n, _ := login(t, addr, creds.Replication, clientTLS(t, ca, &pdx.files)); n != 0 {
			t.Errorf("TLS login with pdx's certificate: error %d, want success", n)
		}
		if n, _ := login(t, addr, creds.Application, nil); n != 0 {
			t.Errorf("plain application login without require_secure_transport: error %d", n)
		}
	})

	t.Run("a replica with the asked-for TLS is not re-pointed", func(t *testing.T) {
		before := binlogDumpIDs(t, iad, creds)
		if err := pdx.op.ReplicateFrom(ctxT(t), iad.endpoint(), repl); err != nil {
			t.Fatal(err)
		}
		if after := binlogDumpIDs(t, iad, creds); len(before) != 1 || len(after) != 1 || before[0] != after[0] {
			t.Fatalf("replication session %v became %v", before, after)
		}
	})

	t.Run("rotation: FLUSH SSL serves the new certificate, replication carries on", func(t *testing.T) {
		// The sidecar's watcher, over the Pod-local socket.
		local := sidecarConn(t, iad, creds)
		w := &certreload.Watcher{Reload: local.ReloadTLS,
			Files: certreload.Files{Cert: iad.files.Cert, Key: iad.files.Key, CA: iad.files.CA}}
		if _, err := w.Check(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		_, oldSerial := login(t, iad.db.Addr(0), creds.Application, clientTLS(t, ca, nil))
		session := binlogDumpIDs(t, iad, creds)
		before, err := pdx.op.Status(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		_, newSerial := ca.writeSiteTLS(t, iad.dir, "iad")
		if _, served := login(t, iad.db.Addr(0), creds.Application, clientTLS(t, ca, nil)); served.Cmp(oldSerial) != 0 {
			t.Fatalf("serial %v served before the reload, want the old %v", served, oldSerial)
		}
		if reloaded, err := w.Check(ctxT(t)); err != nil || !reloaded {
			t.Fatalf("watcher after rotation: reloaded %v, err %v", reloaded, err)
		}
		// A reload writes no transaction: a FLUSH that went to the binlog
		// would give every site a GTID of its own, an errant one on a replica.
		pw := &certreload.Watcher{Reload: sidecarConn(t, pdx, creds).ReloadTLS,
			Files: certreload.Files{Cert: pdx.files.Cert, Key: pdx.files.Key, CA: pdx.files.CA}}
		if _, err := pw.Check(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if after, err := pdx.op.Status(ctxT(t)); err != nil || !after.Executed.Equal(before.Executed) {
			t.Fatalf("the replica's executed set moved on a reload: %v, then %v (%v)", before.Executed, after.Executed, err)
		}
		if _, served := login(t, iad.db.Addr(0), creds.Application, clientTLS(t, ca, nil)); served.Cmp(newSerial) != 0 {
			t.Fatalf("serial %v served after FLUSH SSL, want the new %v", served, newSerial)
		}
		replicated(t, iad, pdx, creds, "INSERT INTO t VALUES (1)")
		if after := binlogDumpIDs(t, iad, creds); len(after) != 1 || after[0] != session[0] {
			t.Fatalf("replication session %v became %v: the reload cut it", session, after)
		}
		healthyTLSReplica(t, pdx)
		// A replica that reconnects now checks the new certificate.
		if err := pdx.op.StopReplication(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if err := pdx.op.ReplicateFrom(ctxT(t), iad.endpoint(), repl); err != nil {
			t.Fatal(err)
		}
		replicated(t, iad, pdx, creds, "INSERT INTO t VALUES (2)")
		healthyTLSReplica(t, pdx)
	})

	t.Run("a broken certificate is refused and the old one stays", func(t *testing.T) {
		_, served := login(t, iad.db.Addr(0), creds.Application, clientTLS(t, ca, nil))
		other := t.TempDir()
		mismatched, _ := ca.writeSiteTLS(t, other, "iad")
		copyFile(t, mismatched.Key, iad.files.Key) // a key that does not match tls.crt
		if err := iad.op.ReloadTLS(ctxT(t)); err == nil {
			t.Errorf("FLUSH SSL with a mismatched key succeeded")
		}
		if _, now := login(t, iad.db.Addr(0), creds.Application, clientTLS(t, ca, nil)); now == nil || now.Cmp(served) != 0 {
			t.Fatalf("after a failed reload the server shows %v, want the old %v", now, served)
		}
		replicated(t, iad, pdx, creds, "INSERT INTO t VALUES (3)")
	})
}

// TestRequireSecureTransport: with spec.mysql.tls.requireSecureTransport a
// plain TCP login is refused, TLS logins work, and the Pod-local socket the
// sidecar uses is unaffected.
func TestRequireSecureTransport(t *testing.T) {
	creds := testCredentials()
	ca := newTestCA(t, "bloodraven test CA")
	iad := bootTLSSite(t, ca, "iad", creds, v1alpha1.MySQLTLSSpec{RequireSecureTransport: true})
	addr := iad.db.Addr(0)
	if n, _ := login(t, addr, creds.Application, nil); n == 0 {
		t.Errorf("plain application login accepted with require_secure_transport=ON")
	}
	if n, _ := login(t, addr, creds.Application, clientTLS(t, ca, nil)); n != 0 {
		t.Errorf("TLS application login: error %d", n)
	}
	if _, err := iad.op.Status(ctxT(t)); err != nil {
		t.Errorf("operator over TLS: %v", err)
	}
	if err := sidecarConn(t, iad, creds).Fence(ctxT(t)); err != nil {
		t.Errorf("fence over the unix socket: %v", err)
	}
}

// sidecarConn is the sidecar's connection: the unix socket, no TLS.
func sidecarConn(t *testing.T, s *tlsSite, creds Credentials) mysql.Instance {
	t.Helper()
	in, err := mysql.Open(mysql.Config{Socket: s.db.Socket(0), User: creds.Operator.Username,
		Password: creds.Operator.Password, Flavor: v1alpha1.FlavorMariaDB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return in
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
