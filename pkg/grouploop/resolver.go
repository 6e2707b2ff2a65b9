package grouploop

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// SiteAccess is how to reach one site's mysqld.
type SiteAccess struct {
	// Config is how the operator connects (address and operator account).
	Config mysql.Config
	// Endpoint is where other sites' replicas reach this site's mysqld.
	Endpoint mysql.Endpoint
	// Replication is the account replicas of this site connect with.
	Replication mysql.Credentials
}

// Resolver maps a group's site to the way the operator reaches it. Tests and
// the playground map sites to local addresses; nothing else changes.
type Resolver interface {
	Resolve(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (SiteAccess, error)
}

// CredentialSource reads a group's accounts; *routing.Router is one.
type CredentialSource interface {
	Credentials(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) (routing.Credentials, error)
}

// TLSSource reads the CA bundle of a site's certificate Secret, nil when the
// site has none; *routing.Router is one.
type TLSSource interface {
	SiteCA(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) ([]byte, error)
}

// ServiceResolver reaches each site through its per-site Service,
// <group>-<site>.<namespace>.svc:3306, with the group's credentials Secrets.
// With TLS set, a site that has a certificate is reached over TLS (see WithTLS).
type ServiceResolver struct {
	Credentials CredentialSource
	TLS         TLSSource
}

// Resolve implements Resolver.
func (r ServiceResolver) Resolve(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (SiteAccess, error) {
	creds, err := r.Credentials.Credentials(ctx, g)
	if err != nil {
		return SiteAccess{}, fmt.Errorf("resolve %s: %w", site, err)
	}
	host := routing.SiteServiceHost(g.Namespace, g.Name, site)
	acc := AccessFor(g, host, routing.MySQLPort, creds)
	if r.TLS == nil {
		return acc, nil
	}
	ca, err := r.TLS.SiteCA(ctx, g, site)
	if err != nil {
		return SiteAccess{}, fmt.Errorf("resolve %s: %w", site, err)
	}
	if ca == nil {
		return acc, nil
	}
	return WithTLS(acc, ca), nil
}

// WithTLS secures a site's access with its certificate: the operator
// connects over TLS and checks the server's certificate against ca and the
// host it dials (the Service name, which the certificate carries), and a
// replica of this site logs in with its own site certificate (the
// replication account requires X509) and checks the same name.
func WithTLS(acc SiteAccess, ca []byte) SiteAccess {
	acc.Config.TLS = &mysql.ClientTLS{CA: ca}
	f := routing.PodTLSFiles
	acc.Replication.TLS = mysql.SourceTLS{CAFile: f.CA, CertFile: f.Cert, KeyFile: f.Key, VerifyServerCert: true}
	return acc
}

// AccessFor builds the SiteAccess of a mysqld at host:port with the group's
// accounts: the application account is the one fences kill, the replication
// and monitor accounts are never killed.
func AccessFor(g *v1alpha1.MysqlFailoverGroup, host string, port int, c routing.Credentials) SiteAccess {
	return SiteAccess{
		Config: mysql.Config{
			Addr:        net.JoinHostPort(host, strconv.Itoa(port)),
			User:        c.Operator.Username,
			Password:    c.Operator.Password,
			Flavor:      g.Spec.MySQL.Flavor,
			AppUsers:    nonEmpty(c.Application.Username),
			SystemUsers: nonEmpty(c.Replication.Username, c.Monitor.Username),
		},
		Endpoint:    mysql.Endpoint{Host: host, Port: port},
		Replication: mysql.Credentials{User: c.Replication.Username, Password: c.Replication.Password},
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
