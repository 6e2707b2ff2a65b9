package authority

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// TestNudgeOverTLS: a nudge presents the operator's certificate and goes
// through only to the site it is for; an impostor at a site's address gets
// no request.
func TestNudgeOverTLS(t *testing.T) {
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // site -> identity of the caller
	serveAs := func(site string, id pki.Identity) string {
		is, err := ca.Issue(pki.Request{Identity: id}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := is.TLS()
		src := pki.StaticSource{Cert: &cert, Roots: ca.Pool()}
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			caller, err := pki.PeerIdentity(r.TLS, ca.Pool(), time.Now())
			if err == nil {
				got[site] = caller.String()
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(src))
		s.Start()
		t.Cleanup(s.Close)
		return strings.Replace(s.URL, "http://", "https://", 1)
	}
	urls := map[string]string{
		"a": serveAs("a", pki.SiteIdentity("shop", "orders", "a")),
		"b": serveAs("b", pki.SiteIdentity("shop", "orders", "a")), // an impostor at b's address
	}
	keeper := pki.NewKeeper(ca, pki.Request{Identity: pki.OperatorIdentity()}, time.Now)
	n := NewNudger(func(_, _, site string) string { return urls[site] }, time.Second, prometheus.NewRegistry(), logr.Discard())
	n.UseCredentials(keeper)
	for _, site := range []string{"a", "b"} {
		_ = n.send(siteKey{group: ordersKey, site: site})
	}
	if got["a"] != pki.OperatorIdentity().String() {
		t.Fatalf("site a heard %q, want the operator", got["a"])
	}
	if _, ok := got["b"]; ok {
		t.Fatal("the impostor at b's address got the nudge")
	}
	if f := testutil.ToFloat64(n.results.WithLabelValues(NudgeFailed)); f != 1 {
		t.Fatalf("failed nudges %v, want 1", f)
	}
}

var ordersKey = types.NamespacedName{Namespace: "shop", Name: "orders"}
