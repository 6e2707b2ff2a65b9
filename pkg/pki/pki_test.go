package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/pkg/pki"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func newCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("test-ca", t0, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func issue(t *testing.T, ca *pki.CA, req pki.Request, at time.Time) pki.Issued {
	t.Helper()
	is, err := ca.Issue(req, at)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func TestIdentityURIRoundTrip(t *testing.T) {
	for name, id := range map[string]pki.Identity{
		"operator": pki.OperatorIdentity(),
		"site":     pki.SiteIdentity("shop", "orders", "iad"),
		"dotted":   pki.SiteIdentity("team.a", "orders-2", "us-east-1a"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := pki.ParseIdentityURI(id.URI())
			if err != nil || got != id {
				t.Fatalf("round trip of %s: %+v, %v", id, got, err)
			}
		})
	}
}

func TestParseIdentityURIRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"other scheme":       "https://bloodraven.shipstream.io/operator",
		"other trust domain": "spiffe://example.com/operator",
		"short path":         "spiffe://bloodraven.shipstream.io/ns/shop/group/orders",
		"long path":          "spiffe://bloodraven.shipstream.io/ns/shop/group/orders/site/iad/x",
		"wrong words":        "spiffe://bloodraven.shipstream.io/namespace/shop/group/orders/site/iad",
		"empty name":         "spiffe://bloodraven.shipstream.io/ns//group/orders/site/iad",
		"upper case":         "spiffe://bloodraven.shipstream.io/ns/Shop/group/orders/site/iad",
		"query":              "spiffe://bloodraven.shipstream.io/operator?x=1",
		"escaped slash":      "spiffe://bloodraven.shipstream.io/ns/shop/group/orders%2Fx/site/iad",
	} {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if id, err := pki.ParseIdentityURI(u); !errors.Is(err, pki.ErrNoIdentity) {
				t.Fatalf("%s parsed as %+v, %v", raw, id, err)
			}
		})
	}
}

func TestIssueAndVerify(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	site := pki.SiteIdentity("shop", "orders", "iad")
	is := issue(t, ca, pki.SiteRequest("shop", "orders", "iad", []string{"orders-iad.shop.svc"}), t0)
	two := func(is pki.Issued) []*x509.Certificate { return []*x509.Certificate{is.Cert} }
	cases := []struct {
		name  string
		chain []*x509.Certificate
		roots *x509.CertPool
		at    time.Time
		usage x509.ExtKeyUsage
		want  error
	}{
		{"valid as client", two(is), ca.Pool(), t0.Add(time.Hour), x509.ExtKeyUsageClientAuth, nil},
		{"valid as server", two(is), ca.Pool(), t0.Add(time.Hour), x509.ExtKeyUsageServerAuth, nil},
		{"other CA", two(is), other.Pool(), t0.Add(time.Hour), x509.ExtKeyUsageClientAuth, pki.ErrUntrusted},
		{"expired", two(is), ca.Pool(), t0.Add(pki.LeafValidity + time.Minute), x509.ExtKeyUsageClientAuth, pki.ErrUntrusted},
		{"not yet valid", two(is), ca.Pool(), t0.Add(-time.Hour), x509.ExtKeyUsageClientAuth, pki.ErrUntrusted},
		{"no certificate", nil, ca.Pool(), t0, x509.ExtKeyUsageClientAuth, pki.ErrNoCertificate},
		{"no roots", two(is), nil, t0, x509.ExtKeyUsageClientAuth, pki.ErrUntrusted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := pki.Verify(c.chain, c.roots, c.at, c.usage)
			if !errors.Is(err, c.want) || (c.want == nil && id != site) {
				t.Fatalf("Verify: %+v, %v; want %v", id, err, c.want)
			}
		})
	}
	if is.Cert.NotAfter.Sub(t0) != pki.LeafValidity || len(is.Cert.DNSNames) != 1 {
		t.Fatalf("leaf: NotAfter %s, DNS %v", is.Cert.NotAfter, is.Cert.DNSNames)
	}
}

func TestIdentityOfNeedsExactlyOne(t *testing.T) {
	ca := newCA(t)
	plain := issue(t, ca, pki.Request{CommonName: "x"}, t0)
	if _, err := pki.IdentityOf(plain.Cert); !errors.Is(err, pki.ErrNoIdentity) {
		t.Fatalf("no URI: %v", err)
	}
	if _, err := pki.IdentityOf(nil); !errors.Is(err, pki.ErrNoCertificate) {
		t.Fatalf("nil: %v", err)
	}
}

func TestNeedsRenewal(t *testing.T) {
	ca, rotated := newCA(t), newCA(t)
	req := pki.SiteRequest("shop", "orders", "iad", []string{"a.svc"})
	is := issue(t, ca, req, t0)
	cases := []struct {
		name string
		ca   *pki.CA
		req  pki.Request
		at   time.Time
		want bool
	}{
		{"fresh", ca, req, t0.Add(time.Hour), false},
		{"day 59", ca, req, t0.Add(59 * 24 * time.Hour), false},
		{"last third", ca, req, t0.Add(61 * 24 * time.Hour), true},
		{"expired", ca, req, t0.Add(pki.LeafValidity + time.Hour), true},
		{"CA rotated", rotated, req, t0.Add(time.Hour), true},
		{"other identity", ca, pki.SiteRequest("shop", "orders", "pdx", []string{"a.svc"}), t0.Add(time.Hour), true},
		{"DNS names changed", ca, pki.SiteRequest("shop", "orders", "iad", []string{"a.svc", "b.svc"}), t0.Add(time.Hour), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := pki.NeedsRenewal(is.Cert, c.ca, c.req, c.at); got != c.want {
				t.Fatalf("NeedsRenewal = %v, want %v", got, c.want)
			}
		})
	}
}

func TestPlanSecret(t *testing.T) {
	ca := newCA(t)
	req := pki.SiteRequest("shop", "orders", "iad", nil)
	first, changed, err := pki.PlanSecret(nil, ca, req, t0)
	if err != nil || !changed {
		t.Fatalf("first issue: changed %v, %v", changed, err)
	}
	same, changed, _ := pki.PlanSecret(first, ca, req, t0.Add(24*time.Hour))
	if changed || string(same[pki.SecretKeyCert]) != string(first[pki.SecretKeyCert]) {
		t.Fatal("a good certificate was reissued")
	}
	// A CA rotation's first step: a second CA joins the bundle. The leaf stays.
	next := newCA(t)
	ca.Bundle = append(ca.Bundle, next.Cert)
	bundled, changed, _ := pki.PlanSecret(first, ca, req, t0.Add(24*time.Hour))
	if !changed || string(bundled[pki.SecretKeyCert]) != string(first[pki.SecretKeyCert]) {
		t.Fatal("a bundle change must keep the leaf and rewrite ca.crt")
	}
	if got, _ := pki.ParseCertificates(bundled[pki.SecretKeyCA]); len(got) != 2 {
		t.Fatalf("bundle has %d certificates, want 2", len(got))
	}
	renewed, changed, _ := pki.PlanSecret(first, ca, req, t0.Add(70*24*time.Hour))
	if !changed || string(renewed[pki.SecretKeyCert]) == string(first[pki.SecretKeyCert]) {
		t.Fatal("a certificate in its last third must be reissued")
	}
	broken := map[string][]byte{pki.SecretKeyCert: []byte("junk"), pki.SecretKeyKey: first[pki.SecretKeyKey]}
	if _, changed, _ := pki.PlanSecret(broken, ca, req, t0); !changed {
		t.Fatal("a broken Secret must be reissued")
	}
}

func TestLoadCARoundTrip(t *testing.T) {
	ca := newCA(t)
	key, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := pki.LoadCA(ca.CertPEM(), key, ca.BundlePEM())
	if err != nil || !back.Cert.Equal(ca.Cert) || len(back.Bundle) != 1 {
		t.Fatalf("LoadCA: %v", err)
	}
	other := newCA(t)
	otherKey, _ := other.KeyPEM()
	if _, err := pki.LoadCA(ca.CertPEM(), otherKey, nil); !errors.Is(err, pki.ErrNotCA) {
		t.Fatalf("mismatched key: %v", err)
	}
	leaf := issue(t, ca, pki.Request{Identity: pki.OperatorIdentity()}, t0)
	if _, err := pki.LoadCA(leaf.CertPEM, leaf.KeyPEM, nil); !errors.Is(err, pki.ErrNotCA) {
		t.Fatalf("leaf as CA: %v", err)
	}
}

// TestClientConfigChecksIdentity runs real TLS handshakes: the client
// accepts the server only when it presents the identity it meant to reach.
func TestClientConfigChecksIdentity(t *testing.T) {
	ca, other := newCA(t), newCA(t)
	now := func() time.Time { return time.Now() }
	srv := func(c *pki.CA, id pki.Identity) pki.Source {
		is := issue(t, c, pki.Request{Identity: id}, time.Now())
		cert, err := is.TLS()
		if err != nil {
			t.Fatal(err)
		}
		return pki.StaticSource{Cert: &cert, Roots: c.Pool()}
	}
	client := srv(ca, pki.SiteIdentity("shop", "orders", "iad"))
	pdx := pki.SiteIdentity("shop", "orders", "pdx")
	cases := []struct {
		name   string
		server pki.Source
		ok     bool
	}{
		{"expected peer", srv(ca, pdx), true},
		{"another site", srv(ca, pki.SiteIdentity("shop", "orders", "iad")), false},
		{"same site, other group", srv(ca, pki.SiteIdentity("shop", "billing", "pdx")), false},
		{"operator instead of peer", srv(ca, pki.OperatorIdentity()), false},
		{"right identity, other CA", srv(other, pdx), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := handshake(t, pki.ServerConfig(c.server), pki.ClientConfig(client, pdx, now))
			if (err == nil) != c.ok {
				t.Fatalf("handshake: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func handshake(t *testing.T, sc, cc *tls.Config) error {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srvErr := make(chan error, 1)
	go func() {
		s := tls.Server(a, sc)
		srvErr <- s.Handshake()
	}()
	c := tls.Client(b, cc)
	err := c.Handshake()
	if err != nil {
		_ = b.Close()
	}
	<-srvErr
	return err
}

func TestFileSourceReloads(t *testing.T) {
	ca := newCA(t)
	dir := t.TempDir()
	write := func(site string) {
		data, _, err := pki.PlanSecret(nil, ca, pki.SiteRequest("shop", "orders", site, nil), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range data {
			if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pki.NewFileSource(dir); err == nil {
		t.Fatal("an empty folder must not load")
	}
	write("iad")
	src, err := pki.NewFileSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	idOf := func() pki.Identity {
		c, err := src.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		id, _ := pki.IdentityOf(leaf)
		return id
	}
	if got := idOf(); got.Site != "iad" {
		t.Fatalf("loaded %s", got)
	}
	time.Sleep(1100 * time.Millisecond)
	write("pdx") // a renewal rewrites the files
	if got := idOf(); got.Site != "pdx" {
		t.Fatalf("after rewrite: %s", got)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, pki.SecretKeyCert), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := idOf(); got.Site != "pdx" {
		t.Fatalf("a broken rewrite must keep the last good pair, got %s", got)
	}
}

func TestKeeperRenews(t *testing.T) {
	ca := newCA(t)
	now := t0
	k := pki.NewKeeper(ca, pki.Request{Identity: pki.OperatorIdentity(), DNSNames: []string{"bloodraven.x.svc"}},
		func() time.Time { return now })
	a, err := k.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour)
	if b, _ := k.Certificate(); b != a {
		t.Fatal("a fresh certificate was renewed")
	}
	now = now.Add(60 * 24 * time.Hour)
	c, _ := k.Certificate()
	if c == a || !c.Leaf.NotAfter.After(a.Leaf.NotAfter) {
		t.Fatal("a certificate in its last third was not renewed")
	}
	rotated := newCA(t)
	k.SetCA(rotated)
	d, _ := k.Certificate()
	if d.Leaf.CheckSignatureFrom(rotated.Cert) != nil {
		t.Fatal("after a CA swap the certificate must come from the new CA")
	}
}
