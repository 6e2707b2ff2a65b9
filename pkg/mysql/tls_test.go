package mysql

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

var replicaTLS = SourceTLS{
	CAFile: "/etc/tls/ca.crt", CertFile: "/etc/tls/tls.crt", KeyFile: "/etc/tls/tls.key", VerifyServerCert: true,
}

// withSSL appends a replica's TLS columns, in MySQL 8.4 or MariaDB naming,
// to a SHOW REPLICA STATUS row.
func withSSL(base []string, prefix string, t SourceTLS) []string {
	allowed, verify := "No", "No"
	if t.Enabled() {
		allowed = "Yes"
	}
	if t.VerifyServerCert {
		verify = "Yes"
	}
	return append(slices.Clone(base), prefix+"_SSL_Allowed="+allowed, prefix+"_SSL_CA_File="+t.CAFile,
		prefix+"_SSL_Cert="+t.CertFile, prefix+"_SSL_Key="+t.KeyFile, prefix+"_SSL_Verify_Server_Cert="+verify)
}

// TestTLSStatements pins the exact statements of both flavors: MySQL 8
// cannot be installed here, so this is what stands for it.
func TestTLSStatements(t *testing.T) {
	ctx := context.Background()
	creds := Credentials{User: "repl", Password: "pw", TLS: replicaTLS}
	tlsArgs := " [db-b 3306 repl pw /etc/tls/ca.crt /etc/tls/tls.crt /etc/tls/tls.key 1]"
	noVerify := creds
	noVerify.TLS.VerifyServerCert = false
	mysqlFromA := withSSL(mysqlReplicaRow, "Source", SourceTLS{})
	mysqlFromATLS := withSSL(mysqlReplicaRow, "Source", replicaTLS)
	mariaHealthy := []string{"Master_Host=10.0.0.1", "Master_Port=3306", "Master_User=repl",
		"Slave_IO_Running=Yes", "Slave_SQL_Running=Yes", "Last_IO_Errno=0", "Last_SQL_Errno=0", "Using_Gtid=Current_Pos"}
	mariaFromA := withSSL(mariaHealthy, "Master", SourceTLS{})
	mariaFromATLS := withSSL(mariaHealthy, "Master", replicaTLS)
	tests := []struct {
		name  string
		d     dialect
		setup func(*recorder)
		verb  func(*instance) error
		want  []string
	}{{
		name: "mysql: replicate over TLS with the replica's certificate",
		d:    mysqlDialect{},
		verb: func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"db-b", 3306}, creds) },
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON",
			"CHANGE REPLICATION SOURCE TO SOURCE_HOST=?, SOURCE_PORT=?, SOURCE_USER=?, SOURCE_PASSWORD=?, " +
				"SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1, GET_SOURCE_PUBLIC_KEY=1, SOURCE_SSL=1, " +
				"SOURCE_SSL_CA=?, SOURCE_SSL_CERT=?, SOURCE_SSL_KEY=?, SOURCE_SSL_VERIFY_SERVER_CERT=?" + tlsArgs,
			"START REPLICA",
		},
	}, {
		name: "mysql: without server verification the flag is 0",
		d:    mysqlDialect{},
		verb: func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"db-b", 3306}, noVerify) },
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON",
			mysqlChangeSource + mysqlSourceSSL + strings.Replace(tlsArgs, " 1]", " 0]", 1), "START REPLICA",
		},
	}, {
		name:  "mysql: a healthy plain replica of the same source is re-pointed over TLS",
		d:     mysqlDialect{},
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlFromA) },
		verb:  func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"db-a", 3306}, creds) },
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL super_read_only = ON",
			"STOP REPLICA", mysqlChangeSource + mysqlSourceSSL + strings.Replace(tlsArgs, "db-b", "db-a", 1),
			"START REPLICA",
		},
	}, {
		name:  "mysql: a replica already on TLS is left alone",
		d:     mysqlDialect{},
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlFromATLS) },
		verb:  func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"db-a", 3306}, creds) },
		want:  []string{"SHOW REPLICA STATUS"},
	}, {
		name:  "mysql: a TLS replica asked for no TLS is left alone, never downgraded",
		d:     mysqlDialect{},
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mysqlFromATLS) },
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{"db-a", 3306}, Credentials{User: "repl", Password: "pw"})
		},
		want: []string{"SHOW REPLICA STATUS"},
	}, {
		name: "mysql: reload TLS",
		d:    mysqlDialect{},
		verb: func(in *instance) error { return in.ReloadTLS(ctx) },
		want: []string{"ALTER INSTANCE RELOAD TLS"},
	}, {
		name: "mariadb: replicate over TLS with the replica's certificate",
		d:    mariadbDialect{},
		verb: func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"db-b", 3306}, creds) },
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL read_only = ON",
			"CHANGE MASTER TO MASTER_HOST=?, MASTER_PORT=?, MASTER_USER=?, MASTER_PASSWORD=?, " +
				"MASTER_USE_GTID=current_pos, MASTER_CONNECT_RETRY=1, MASTER_SSL=1, MASTER_SSL_CA=?, " +
				"MASTER_SSL_CERT=?, MASTER_SSL_KEY=?, MASTER_SSL_VERIFY_SERVER_CERT=?" + tlsArgs,
			"START REPLICA",
		},
	}, {
		name:  "mariadb: a plain replica of the same source is re-pointed over TLS",
		d:     mariadbDialect{},
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mariaFromA) },
		verb: func(in *instance) error {
			return in.ReplicateFrom(ctx, Endpoint{"10.0.0.1", 3306}, creds)
		},
		want: []string{
			"SHOW REPLICA STATUS", "SET SESSION lock_wait_timeout = ? [1]", "SET GLOBAL read_only = ON",
			"STOP REPLICA", mariadbChangeMaster + mariadbMasterSSL + strings.Replace(tlsArgs, "db-b", "10.0.0.1", 1),
			"START REPLICA",
		},
	}, {
		name:  "mariadb: a replica already on TLS is left alone",
		d:     mariadbDialect{},
		setup: func(r *recorder) { r.answer("SHOW REPLICA STATUS", mariaFromATLS) },
		verb:  func(in *instance) error { return in.ReplicateFrom(ctx, Endpoint{"10.0.0.1", 3306}, creds) },
		want:  []string{"SHOW REPLICA STATUS"},
	}, {
		name: "mariadb: reload TLS",
		d:    mariadbDialect{},
		verb: func(in *instance) error { return in.ReloadTLS(ctx) },
		want: []string{"FLUSH NO_WRITE_TO_BINLOG SSL"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			if tc.setup != nil {
				tc.setup(rec)
			}
			if err := tc.verb(recorded(Config{}, tc.d, rec)); err != nil {
				t.Fatalf("verb: %v", err)
			}
			if got := rec.sent(); !slices.Equal(got, tc.want) {
				t.Fatalf("sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// A half-configured SourceTLS is refused before anything is sent: a
// replica must never be pointed at a source with a CA but no certificate.
func TestReplicateFromRefusesPartialTLS(t *testing.T) {
	for name, tl := range map[string]SourceTLS{
		"no key":      {CAFile: "/ca", CertFile: "/crt"},
		"no CA":       {CertFile: "/crt", KeyFile: "/key"},
		"verify only": {VerifyServerCert: true},
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			err := recorded(Config{}, mysqlDialect{}, rec).
				ReplicateFrom(context.Background(), Endpoint{"db-b", 3306}, Credentials{User: "repl", TLS: tl})
			if !errors.Is(err, ErrInvalidConfig) || len(rec.calls) != 0 {
				t.Fatalf("err %v after %v, want ErrInvalidConfig and nothing sent", err, rec.sent())
			}
		})
	}
}

func TestReplicaStatusTLSColumns(t *testing.T) {
	for name, r := range map[string][]string{
		"mysql 8.4": withSSL(mysqlReplicaRow, "Source", replicaTLS),
		"mariadb":   withSSL(mariadbReplicaRow, "Master", replicaTLS),
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			rec.answer("q", r)
			rs := parseReplicaStatus(rec.answers["q"][0])
			if !rs.SSLAllowed || !rs.SSLVerifyServerCert || rs.SSLCAFile != replicaTLS.CAFile ||
				rs.SSLCertFile != replicaTLS.CertFile || rs.SSLKeyFile != replicaTLS.KeyFile {
				t.Fatalf("parsed %+v", rs)
			}
			if !rs.UsesTLS(replicaTLS) || rs.UsesTLS(SourceTLS{CAFile: "/other", CertFile: "c", KeyFile: "k"}) {
				t.Fatalf("UsesTLS disagrees with the columns: %+v", rs)
			}
		})
	}
}

func TestClientTLSConfig(t *testing.T) {
	if _, err := driverConfig(Config{Addr: "db:3306", TLS: &ClientTLS{CA: []byte("not pem")}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a CA bundle without certificates: %v, want ErrInvalidConfig", err)
	}
	if _, err := Open(Config{Addr: "db:3306", TLS: &ClientTLS{}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Open with an empty CA: %v, want ErrInvalidConfig", err)
	}
	mc, err := driverConfig(Config{Socket: "/run/mysqld.sock", TLS: &ClientTLS{}})
	if err != nil || mc.TLS != nil {
		t.Fatalf("unix socket: TLS %v, err %v; want no TLS", mc.TLS, err)
	}
}
