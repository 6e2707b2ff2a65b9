package pki

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"
)

// TrustDomain is the host of every identity URI.
const TrustDomain = "bloodraven.shipstream.io"

// Kind tells an operator identity from a site identity.
type Kind uint8

// Kinds of identity.
const (
	KindNone Kind = iota
	KindOperator
	KindSite
)

// Identity is who a certificate speaks for.
type Identity struct {
	Kind      Kind
	Namespace string // of the site's group; empty for the operator
	Group     string
	Site      string
}

// OperatorIdentity is the operator's identity.
func OperatorIdentity() Identity { return Identity{Kind: KindOperator} }

// SiteIdentity is the identity of one site of one group.
func SiteIdentity(namespace, group, site string) Identity {
	return Identity{Kind: KindSite, Namespace: namespace, Group: group, Site: site}
}

// URI renders the identity as its URI SAN.
func (id Identity) URI() *url.URL {
	switch id.Kind {
	case KindOperator:
		return &url.URL{Scheme: "spiffe", Host: TrustDomain, Path: "/operator"}
	case KindSite:
		return &url.URL{Scheme: "spiffe", Host: TrustDomain,
			Path: "/ns/" + id.Namespace + "/group/" + id.Group + "/site/" + id.Site}
	}
	return nil
}

// String is the URI, or "none".
func (id Identity) String() string {
	if u := id.URI(); u != nil {
		return u.String()
	}
	return "none"
}

// SameGroup reports whether id is a site of the given group.
func (id Identity) SameGroup(namespace, group string) bool {
	return id.Kind == KindSite && id.Namespace == namespace && id.Group == group
}

// ParseIdentityURI reads one identity URI.
func ParseIdentityURI(u *url.URL) (Identity, error) {
	if u == nil || u.Scheme != "spiffe" || u.Host != TrustDomain || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrNoIdentity, u)
	}
	if u.Path == "/operator" {
		return OperatorIdentity(), nil
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 6 || parts[0] != "ns" || parts[2] != "group" || parts[4] != "site" {
		return Identity{}, fmt.Errorf("%w: path %q", ErrNoIdentity, u.Path)
	}
	for _, p := range []string{parts[1], parts[3], parts[5]} {
		if !validName(p) {
			return Identity{}, fmt.Errorf("%w: name %q in %q", ErrNoIdentity, p, u.Path)
		}
	}
	return SiteIdentity(parts[1], parts[3], parts[5]), nil
}

// validName accepts Kubernetes-style names: lower-case letters, digits, '-' and '.'.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// IdentityOf reads the identity of a certificate: it must carry exactly one
// URI SAN under TrustDomain. Other URI SANs are ignored.
func IdentityOf(cert *x509.Certificate) (Identity, error) {
	if cert == nil {
		return Identity{}, ErrNoCertificate
	}
	var found []Identity
	for _, u := range cert.URIs {
		if u.Host != TrustDomain {
			continue
		}
		id, err := ParseIdentityURI(u)
		if err != nil {
			return Identity{}, err
		}
		found = append(found, id)
	}
	if len(found) != 1 {
		return Identity{}, fmt.Errorf("%w: %d identity URIs", ErrNoIdentity, len(found))
	}
	return found[0], nil
}
