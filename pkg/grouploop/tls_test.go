package grouploop

import (
	"context"
	"errors"
	"testing"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/routing"
)

type fixedCreds routing.Credentials

func (f fixedCreds) Credentials(context.Context, *v1alpha1.MysqlFailoverGroup) (routing.Credentials, error) {
	return routing.Credentials(f), nil
}

// siteCAs is a TLSSource: site -> CA, with err for every site.
type siteCAs struct {
	ca  map[string][]byte
	err error
}

func (s siteCAs) SiteCA(_ context.Context, _ *v1alpha1.MysqlFailoverGroup, site string) ([]byte, error) {
	return s.ca[site], s.err
}

func TestServiceResolverTLS(t *testing.T) {
	g := testGroup("orders", "a", 2)
	creds := fixedCreds{Operator: routing.Account{Username: "op", Password: "x"},
		Replication: routing.Account{Username: "repl", Password: "y"}}
	ca := []byte("-----BEGIN CERTIFICATE-----")
	wantSource := mysql.SourceTLS{CAFile: routing.PodTLSFiles.CA, CertFile: routing.PodTLSFiles.Cert,
		KeyFile: routing.PodTLSFiles.Key, VerifyServerCert: true}
	broken := errors.New("apiserver down")
	cases := []struct {
		name       string
		tls        TLSSource
		wantTLS    bool
		wantErr    error
		wantSource mysql.SourceTLS
	}{
		{name: "no TLS source: plain, as before", tls: nil},
		{name: "site without a certificate Secret: plain", tls: siteCAs{}},
		{name: "site with a certificate: TLS both ways", tls: siteCAs{ca: map[string][]byte{"a": ca}},
			wantTLS: true, wantSource: wantSource},
		{name: "the Secret cannot be read: no access at all, never a silent plain one",
			tls: siteCAs{ca: map[string][]byte{"a": ca}, err: broken}, wantErr: broken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acc, err := ServiceResolver{Credentials: creds, TLS: tc.tls}.Resolve(context.Background(), g, "a")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := acc.Config.TLS != nil; got != tc.wantTLS {
				t.Fatalf("operator TLS %v, want %v", acc.Config.TLS, tc.wantTLS)
			}
			if tc.wantTLS && (string(acc.Config.TLS.CA) != string(ca) || acc.Config.TLS.ServerName != "") {
				t.Errorf("operator TLS %+v: want the site's CA, checked against the dialled Service name", acc.Config.TLS)
			}
			if acc.Replication.TLS != tc.wantSource {
				t.Errorf("replication TLS %+v, want %+v", acc.Replication.TLS, tc.wantSource)
			}
			if host := routing.SiteServiceHost(g.Namespace, g.Name, "a"); acc.Endpoint.Host != host {
				t.Errorf("endpoint %s, want the Service name %s that the certificate carries", acc.Endpoint.Host, host)
			}
		})
	}
}

// A replica that replicates from the active site without the TLS the
// site's access asks for is re-pointed (the source requires X509, so its
// IO thread would retry forever without an error that counts as broken).
func TestNeedsRepointForTLS(t *testing.T) {
	active := mysql.Endpoint{Host: "orders-a.shop.svc", Port: 3306}
	c := newConns(nil, nil)
	c.sites["a"] = &siteConn{access: WithTLS(SiteAccess{Endpoint: active}, []byte("ca"))}
	want := c.sites["a"].access.Replication.TLS
	replica := func(mod func(rs *mysql.ReplicaStatus)) observation {
		rs := &mysql.ReplicaStatus{SourceHost: active.Host, SourcePort: active.Port, IORunning: mysql.ThreadYes,
			SQLRunning: true, SSLAllowed: true, SSLCAFile: want.CAFile, SSLCertFile: want.CertFile,
			SSLKeyFile: want.KeyFile, SSLVerifyServerCert: true}
		if mod != nil {
			mod(rs)
		}
		return observation{status: mysql.Status{Replica: rs}}
	}
	cases := []struct {
		name string
		o    observation
		want bool
	}{
		{"replicating over the asked-for TLS", replica(nil), false},
		{"replicating in plain text", replica(func(rs *mysql.ReplicaStatus) {
			rs.SSLAllowed, rs.SSLCAFile, rs.SSLCertFile, rs.SSLKeyFile, rs.SSLVerifyServerCert = false, "", "", "", false
		}), true},
		{"retrying, refused without a certificate", replica(func(rs *mysql.ReplicaStatus) {
			rs.SSLAllowed, rs.IORunning, rs.LastIOErrno = false, mysql.ThreadConnecting, 1045
		}), true},
		{"not checking the source's name", replica(func(rs *mysql.ReplicaStatus) { rs.SSLVerifyServerCert = false }), true},
		{"other files", replica(func(rs *mysql.ReplicaStatus) { rs.SSLCertFile = "/tmp/other.crt" }), true},
		{"broken replication is still left for a person", replica(func(rs *mysql.ReplicaStatus) {
			rs.SSLAllowed, rs.SQLRunning, rs.LastSQLErrno = false, false, 1950
		}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsRepoint(tc.o, c, "a"); got != tc.want {
				t.Fatalf("needsRepoint = %v, want %v", got, tc.want)
			}
		})
	}
}
