package mysql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// ClientTLS is how the operator's own connection to a server is secured:
// TLS, with the server's certificate checked against CA and, unless
// ServerName is set, against the host of Config.Addr. It holds data only,
// so two Configs compare equal with reflect.DeepEqual when they would
// connect alike. It is ignored for unix sockets.
type ClientTLS struct {
	// CA is the PEM bundle the server's certificate must chain to.
	CA []byte
	// ServerName, when set, is the name the certificate must carry instead
	// of the host the connection dials.
	ServerName string
}

// config builds the crypto/tls configuration; a CA without any
// certificate is refused, so a broken bundle never means "trust anything".
func (c *ClientTLS) config() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CA) {
		return nil, fmt.Errorf("%w: TLS CA bundle holds no PEM certificate", ErrInvalidConfig)
	}
	return &tls.Config{RootCAs: pool, ServerName: c.ServerName, MinVersion: tls.VersionTLS12}, nil
}

// SourceTLS is how a replica's mysqld secures its connection to its
// source: files on the replica's own filesystem (its site's certificate,
// key and the CA), named in CHANGE MASTER / CHANGE REPLICATION SOURCE. The
// source's replication account requires X509, so the client certificate is
// what lets the replica in. The zero value means no TLS.
type SourceTLS struct {
	CAFile, CertFile, KeyFile string
	// VerifyServerCert makes the replica check that the source's
	// certificate names the host it connects to.
	VerifyServerCert bool
}

// Enabled tells whether any TLS file is set.
func (t SourceTLS) Enabled() bool { return t != SourceTLS{} }

func (t SourceTLS) validate() error {
	if t.Enabled() && (t.CAFile == "" || t.CertFile == "" || t.KeyFile == "") {
		return fmt.Errorf("%w: source TLS needs a CA, a certificate and a key file, got %+v", ErrInvalidConfig, t)
	}
	return nil
}

// UsesTLS tells whether the replication configured on a server connects
// the way t says. Without TLS asked for, any setting matches: a replica
// keeps TLS it already has rather than being re-pointed back and forth.
func (r ReplicaStatus) UsesTLS(t SourceTLS) bool {
	if !t.Enabled() {
		return true
	}
	return r.SSLAllowed && r.SSLCAFile == t.CAFile && r.SSLCertFile == t.CertFile &&
		r.SSLKeyFile == t.KeyFile && r.SSLVerifyServerCert == t.VerifyServerCert
}

// ReloadTLS makes the server read its certificate, key and CA files again
// (MariaDB FLUSH SSL, MySQL ALTER INSTANCE RELOAD TLS). Sessions already
// open, replication included, keep their TLS session; new ones get the new
// certificate. If the new files cannot be loaded the server says so and
// keeps serving the old certificate.
func (in *instance) ReloadTLS(ctx context.Context) error {
	return in.run(ctx, "reload tls", 0, func(ctx context.Context, ex executor, d dialect) error {
		return d.reloadTLS(ctx, ex)
	})
}

// flag renders a boolean option of CHANGE MASTER / CHANGE REPLICATION SOURCE.
func flag(on bool) int {
	if on {
		return 1
	}
	return 0
}

func (mariadbDialect) reloadTLS(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "FLUSH NO_WRITE_TO_BINLOG SSL")
}

func (mysqlDialect) reloadTLS(ctx context.Context, ex executor) error {
	return ex.exec(ctx, "ALTER INSTANCE RELOAD TLS")
}
