package routing

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Keys of a site's certificate Secret (SiteTLSSecretName), which the
// operator issues from its CA: the site's certificate and key, usable as
// server and client certificate, and the CA bundle.
const (
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
	TLSCAKey   = "ca.crt"
)

// SiteTLSDir is where a site's certificate Secret is mounted, read-only,
// in its Pod.
const SiteTLSDir = "/etc/mysql/bloodraven-tls"

// TLSFiles are the paths of a site's certificate, key and CA bundle.
type TLSFiles struct {
	CA, Cert, Key string
}

// PodTLSFiles are the files of SiteTLSDir, the same in every site's Pod:
// mysqld serves them, and a replica's mysqld presents them to its source.
var PodTLSFiles = TLSFiles{
	CA:   SiteTLSDir + "/" + TLSCAKey,
	Cert: SiteTLSDir + "/" + TLSCertKey,
	Key:  SiteTLSDir + "/" + TLSKeyKey,
}

// TLSSettings are the [mysqld] lines for TLS: the site's certificate and
// key, and the CA that client certificates must chain to (the replication
// account requires X509). require_secure_transport is written only when
// spec.mysql.tls asks for it, so a user's own setting in spec.mysql.config
// is not overridden by an OFF. Both flavors know every one of these.
func TLSSettings(f TLSFiles, spec v1alpha1.MySQLTLSSpec) []string {
	lines := []string{"ssl_ca=" + f.CA, "ssl_cert=" + f.Cert, "ssl_key=" + f.Key}
	if spec.RequireSecureTransport {
		lines = append(lines, "require_secure_transport=ON")
	}
	return lines
}

// SiteCA returns the CA bundle of a site's certificate Secret, or nil when
// the site has no certificate Secret yet. A Secret without a CA is an error.
func (r *Router) SiteCA(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) ([]byte, error) {
	name := TLSSecretName(g.Name, site)
	var sec corev1.Secret
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("site %s certificate: secret %s: %w", site, name, err)
	}
	ca := sec.Data[TLSCAKey]
	if len(ca) == 0 {
		return nil, fmt.Errorf("site %s certificate: secret %s has no %q", site, name, TLSCAKey)
	}
	return ca, nil
}
