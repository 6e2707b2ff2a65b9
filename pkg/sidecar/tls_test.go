package sidecar_test

import (
	"crypto/tls"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// tlsBed is a CA and the servers a TLS sidecar talks to.
type tlsBed struct {
	ca *pki.CA
}

func newTLSBed(t *testing.T) *tlsBed {
	t.Helper()
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	return &tlsBed{ca: ca}
}

// source is a certificate of id from ca, trusting b's CA.
func (b *tlsBed) source(t *testing.T, ca *pki.CA, id pki.Identity) pki.StaticSource {
	t.Helper()
	is, err := ca.Issue(pki.Request{Identity: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := is.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return pki.StaticSource{Cert: &c, Roots: b.ca.Pool()}
}

// serve runs h over TLS with src's certificate and returns its https URL.
func serve(t *testing.T, src pki.Source, h http.Handler) string {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(src))
	s.Start()
	t.Cleanup(s.Close)
	return strings.Replace(s.URL, "http://", "https://", 1)
}

// viewServer answers every GET with a view of orders naming active at gen.
func viewServer(active string, gen int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(sidecar.Sign(v1alpha1.ActiveSiteView{Namespace: "shop", Group: "orders", ActiveSite: active,
			Generation: gen, ObservedAt: time.Now()}))
	})
}

func tlsRunner(t *testing.T, src pki.Source, db sidecar.MySQL, operatorURL string, peers ...sidecar.Peer) *sidecar.Runner {
	t.Helper()
	r, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders", Site: "iad",
		LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys}, OperatorURL: operatorURL, Peers: peers,
		Logger: quietLogger(), TLS: src}, db, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTLSPeerIdentity: an impostor at a peer's address, answering with a
// huge generation, is never heard; only the peer's own identity is.
func TestTLSPeerIdentity(t *testing.T) {
	b := newTLSBed(t)
	other := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	cases := []struct {
		name  string
		ca    *pki.CA
		id    pki.Identity
		heard bool
	}{
		{"the peer itself", b.ca, pki.SiteIdentity("shop", "orders", "pdx"), true},
		{"another site of the group", b.ca, pki.SiteIdentity("shop", "orders", "fra"), false},
		{"the same site of another group", b.ca, pki.SiteIdentity("shop", "billing", "pdx"), false},
		{"the operator's identity", b.ca, pki.OperatorIdentity(), false},
		{"the right name from another CA", other.ca, pki.SiteIdentity("shop", "orders", "pdx"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gen := int64(5)
			if !c.heard {
				gen = math.MaxInt64
			}
			peer := serve(t, b.source(t, c.ca, c.id), viewServer("pdx", gen))
			op := serve(t, b.source(t, b.ca, pki.OperatorIdentity()), viewServer("iad", 4))
			db := &fakeDB{writable: true}
			r := tlsRunner(t, self, db, op, sidecar.Peer{Name: "pdx", URL: peer})
			r.Tick(t.Context())
			st := r.Status()
			if st.View == nil || st.View.Generation == math.MaxInt64 {
				t.Fatalf("view %+v: the impostor's generation was adopted", st.View)
			}
			p := st.Peers[0]
			refused := strings.Contains(p.LastError, "certificate") || strings.Contains(p.LastError, "identity")
			if refused == c.heard {
				t.Fatalf("peer contact %+v: heard %v, want %v", p, !refused, c.heard)
			}
			if st.Operator.LastError != "" {
				t.Fatalf("the genuine operator was refused: %s", st.Operator.LastError)
			}
			_, body := get(t, r.Handler(), sidecar.PathMetrics)
			counted := strings.Contains(body, sidecar.MetricRejectedViews+`{reason="`+sidecar.RejectUntrustedPeer+`"} 1`)
			if counted == c.heard {
				t.Fatalf("untrusted peer counted %v, want %v", counted, !c.heard)
			}
		})
	}
}

// TestTLSPlainImpostorIsCounted: something answering in plain HTTP at a
// peer's address is no peer: refused, and counted as an untrusted peer.
func TestTLSPlainImpostorIsCounted(t *testing.T) {
	b := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	plain := httptest.NewServer(viewServer("pdx", math.MaxInt64))
	t.Cleanup(plain.Close)
	op := serve(t, b.source(t, b.ca, pki.OperatorIdentity()), viewServer("iad", 4))
	r := tlsRunner(t, self, &fakeDB{writable: true}, op,
		sidecar.Peer{Name: "pdx", URL: strings.Replace(plain.URL, "http://", "https://", 1)})
	r.Tick(t.Context())
	if v := r.Status().View; v == nil || v.Generation != 4 {
		t.Fatalf("view %+v, want the operator's generation 4", v)
	}
	_, body := get(t, r.Handler(), sidecar.PathMetrics)
	if !strings.Contains(body, sidecar.MetricRejectedViews+`{reason="`+sidecar.RejectUntrustedPeer+`"} 1`) {
		t.Fatalf("no untrusted-peer refusal counted:\n%s", body)
	}
}

// TestTLSOperatorIdentity: a server at the operator's address that is not
// the operator is never heard, so it cannot lift the boot fence.
func TestTLSOperatorIdentity(t *testing.T) {
	b := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	impostor := serve(t, b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "pdx")), viewServer("iad", 9))
	db := &fakeDB{writable: true}
	r := tlsRunner(t, self, db, impostor)
	r.Tick(t.Context())
	st := r.Status()
	if st.View != nil || !st.AwaitingOperator {
		t.Fatalf("an impostor operator was heard: view %+v awaiting %v", st.View, st.AwaitingOperator)
	}
	if w, _ := db.state(); w {
		t.Fatal("mysqld left writable without the operator")
	}
}

func TestTLSConfigRefusesPlainURLs(t *testing.T) {
	b := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	for name, c := range map[string]struct {
		op    string
		peers []sidecar.Peer
	}{
		"plain operator": {"http://op:8090", nil},
		"plain peer":     {"https://op:8091", []sidecar.Peer{{Name: "pdx", URL: "http://pdx:8080"}}},
		"shared address": {"https://op:8091", []sidecar.Peer{{Name: "pdx", URL: "https://op:8091"}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := sidecar.NewRunner(sidecar.Config{Settings: sidecar.Settings{Namespace: "shop", Group: "orders",
				Site: "iad", LeaseTimeout: time.Second, PeerCheckInterval: 200 * time.Millisecond, Keys: sidecar.TestKeys},
				OperatorURL: c.op, Peers: c.peers, TLS: self}, &fakeDB{}, time.Now())
			if err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestTLSRefreshAuthorization: only the operator and the group's other
// sites may ask for a refresh.
func TestTLSRefreshAuthorization(t *testing.T) {
	b := newTLSBed(t)
	other := newTLSBed(t)
	self := b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))
	r := tlsRunner(t, self, &fakeDB{}, "https://op:8091", sidecar.Peer{Name: "pdx", URL: "https://pdx:8080"})
	url := serve(t, self, r.PeerHandler())
	cases := []struct {
		name string
		src  *pki.StaticSource
		code int
	}{
		{"the operator", ptr(b.source(t, b.ca, pki.OperatorIdentity())), http.StatusAccepted},
		{"a peer of the group", ptr(b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "pdx"))), http.StatusAccepted},
		{"no certificate", nil, http.StatusUnauthorized},
		{"its own identity", ptr(b.source(t, b.ca, pki.SiteIdentity("shop", "orders", "iad"))), http.StatusForbidden},
		{"a site of another group", ptr(b.source(t, b.ca, pki.SiteIdentity("shop", "billing", "pdx"))), http.StatusForbidden},
		{"another CA", ptr(b.source(t, other.ca, pki.OperatorIdentity())), http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := pki.StaticSource{Roots: b.ca.Pool()}
			if c.src != nil {
				src.Cert = c.src.Cert
			}
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
				TLSClientConfig: pki.ClientConfig(src, pki.SiteIdentity("shop", "orders", "iad"), time.Now)}}
			resp, err := client.Post(url+v1alpha1.PathPeerRefresh, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.code)
			}
		})
	}
	code, body := get(t, r.HealthHandler(), "/metrics")
	if code != http.StatusOK || !strings.Contains(body, sidecar.MetricRejectedRefreshes+`{reason="wrong-identity"} 2`) {
		t.Fatalf("metrics %d: no rejected refreshes counted:\n%s", code, body)
	}
	// The peer view is open to any TLS client; the health port is plain.
	if code, _ := get(t, r.HealthHandler(), sidecar.PathReadyz); code == http.StatusNotFound {
		t.Fatal("no /readyz on the health port")
	}
	if code, _ := get(t, r.PeerHandler(), sidecar.PathStatus); code != http.StatusNotFound {
		t.Fatal("/status served on the peer port")
	}
}

func ptr[T any](v T) *T { return &v }
