package authority

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// authBed is the API behind its two ports, as cmd/operator wires it: plain
// HTTP and HTTPS with the operator's certificate, and a ReportAuth.
type authBed struct {
	ca     *pki.CA
	reg    *Registry
	auth   *ReportAuth
	reader client.Client
	plain  *httptest.Server
	tls    *httptest.Server
}

var carts = types.NamespacedName{Namespace: "shop", Name: "carts"}

func newAuthBed(t *testing.T, status v1alpha1.MysqlFailoverGroupStatus) *authBed {
	t.Helper()
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	g := testGroup("carts", "b", 7)
	g.Status = status
	g.Status.ActiveSite, g.Status.TopologyGeneration = "b", 7
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(g).WithStatusSubresource(g).Build()
	reg := NewRegistry(time.Now)
	reg.SetSigner(testSigner)
	reg.Publish(g)
	auth := NewReportAuth(func() (*x509.CertPool, error) { return ca.Pool(), nil }, reader, nil,
		prometheus.NewRegistry(), logr.Discard())
	api := &API{Registry: reg, Elected: elected(), Auth: auth}
	b := &authBed{ca: ca, reg: reg, auth: auth, reader: reader, plain: httptest.NewServer(api.Handler())}
	keeper := pki.NewKeeper(ca, pki.Request{Identity: pki.OperatorIdentity()}, time.Now)
	// The operator's own server config, not httptest's certificate.
	b.tls = httptest.NewUnstartedServer(api.Handler())
	b.tls.Listener = tls.NewListener(b.tls.Listener, pki.ServerConfig(keeper))
	b.tls.Start()
	b.tls.URL = strings.Replace(b.tls.URL, "http://", "https://", 1)
	t.Cleanup(func() { b.plain.Close(); b.tls.Close() })
	return b
}

// client calls the HTTPS port presenting a certificate of id from ca (none
// when ca is nil), checking the operator's identity as a sidecar does.
func (b *authBed) client(t *testing.T, ca *pki.CA, id pki.Identity) *http.Client {
	t.Helper()
	src := pki.StaticSource{Roots: b.ca.Pool()}
	if ca != nil {
		is, err := ca.Issue(pki.Request{Identity: id}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c, err := is.TLS()
		if err != nil {
			t.Fatal(err)
		}
		src.Cert = &c
	}
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: pki.ClientConfig(src, pki.OperatorIdentity(), time.Now)}}
}

// report sends a fenced=true report for site through c to base and returns the status code.
func report(t *testing.T, c *http.Client, base, site string) int {
	t.Helper()
	resp, err := c.Get(base + v1alpha1.PathActiveSite + "?namespace=shop&group=carts&site=" + site +
		"&generation=7&fenced=true&mysqld=up")
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestReportAuthentication(t *testing.T) {
	other, err := pki.NewCA("other", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		ca     func(b *authBed) *pki.CA
		id     pki.Identity
		code   int
		reason string
	}{
		{"own certificate", func(b *authBed) *pki.CA { return b.ca }, pki.SiteIdentity("shop", "carts", "a"), http.StatusOK, ""},
		{"no certificate", func(*authBed) *pki.CA { return nil }, pki.Identity{}, http.StatusUnauthorized, RejectNoCertificate},
		{"another site's certificate", func(b *authBed) *pki.CA { return b.ca }, pki.SiteIdentity("shop", "carts", "b"), http.StatusForbidden, RejectWrongIdentity},
		{"same site of another group", func(b *authBed) *pki.CA { return b.ca }, pki.SiteIdentity("shop", "orders", "a"), http.StatusForbidden, RejectWrongIdentity},
		{"same site in another namespace", func(b *authBed) *pki.CA { return b.ca }, pki.SiteIdentity("billing", "carts", "a"), http.StatusForbidden, RejectWrongIdentity},
		{"the operator's identity", func(b *authBed) *pki.CA { return b.ca }, pki.OperatorIdentity(), http.StatusForbidden, RejectWrongIdentity},
		{"certificate of another CA", func(*authBed) *pki.CA { return other }, pki.SiteIdentity("shop", "carts", "a"), http.StatusUnauthorized, RejectUntrusted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newAuthBed(t, v1alpha1.MysqlFailoverGroupStatus{})
			code := report(t, b.client(t, c.ca(b), c.id), b.tls.URL, "a")
			if code != c.code {
				t.Fatalf("status %d, want %d", code, c.code)
			}
			sv := b.reg.Sidecar(carts, "a")
			if c.reason == "" {
				if sv.report == nil || !sv.report.Fenced {
					t.Fatalf("an authenticated report was not recorded: %+v", sv)
				}
				return
			}
			if sv.known {
				t.Fatalf("a refused report changed the evidence: %+v", sv.sidecarRecord)
			}
			if n := testutil.ToFloat64(b.auth.Rejected().WithLabelValues(c.reason)); n != 1 {
				t.Fatalf("%s counted %v times, want 1", c.reason, n)
			}
		})
	}
}

// TestRefusedReportLeavesEvidence: a site's genuine evidence (not fenced,
// lease served) survives forged reports that claim it fenced.
func TestRefusedReportLeavesEvidence(t *testing.T) {
	b := newAuthBed(t, v1alpha1.MysqlFailoverGroupStatus{})
	ca := b.ca
	own := b.client(t, ca, pki.SiteIdentity("shop", "carts", "a"))
	resp, err := own.Get(b.tls.URL + v1alpha1.PathActiveSite + "?namespace=shop&group=carts&site=a&generation=7&fenced=false&mysqld=up")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("genuine report: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	before := b.reg.Sidecar(carts, "a")
	forgers := map[string]*http.Client{
		"no certificate":   b.client(t, nil, pki.Identity{}),
		"peer certificate": b.client(t, ca, pki.SiteIdentity("shop", "carts", "b")),
	}
	for name, c := range forgers {
		if code := report(t, c, b.tls.URL, "a"); code < 400 {
			t.Fatalf("%s: forged report answered %d", name, code)
		}
	}
	if code := report(t, http.DefaultClient, b.plain.URL, "a"); code != http.StatusUnauthorized {
		t.Fatalf("plain forged report after the site authenticated: %d", code)
	}
	after := b.reg.Sidecar(carts, "a")
	if after.report.Fenced || !after.lastServed.Equal(before.lastServed) || after.report.At != before.report.At {
		t.Fatalf("evidence changed: before %+v, after %+v", before.report, after.report)
	}
	if n := testutil.CollectAndCount(b.auth.Rejected()); n == 0 {
		t.Fatal("no rejection counted")
	}
}

// TestUpgradeWindow: plain reports are accepted until every site reported
// with its certificate; then refused, and the switch survives a restart.
func TestUpgradeWindow(t *testing.T) {
	b := newAuthBed(t, v1alpha1.MysqlFailoverGroupStatus{})
	plain := http.DefaultClient
	if code := report(t, plain, b.plain.URL, "a"); code != http.StatusOK {
		t.Fatalf("plain report before the switch: %d", code)
	}
	if code := report(t, plain, b.plain.URL, "b"); code != http.StatusOK {
		t.Fatalf("plain report before the switch: %d", code)
	}
	// Site a's new sidecar reports with its certificate: plain reports for
	// a are refused from now on; b's old sidecar still reports plainly.
	if code := report(t, b.client(t, b.ca, pki.SiteIdentity("shop", "carts", "a")), b.tls.URL, "a"); code != http.StatusOK {
		t.Fatalf("authenticated report of a: %d", code)
	}
	if code := report(t, plain, b.plain.URL, "a"); code != http.StatusUnauthorized {
		t.Fatalf("plain report for a after a authenticated: %d", code)
	}
	if code := report(t, plain, b.plain.URL, "b"); code != http.StatusOK {
		t.Fatalf("plain report for b while b is old: %d", code)
	}
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := b.reader.Get(context.Background(), carts, g); err != nil {
		t.Fatal(err)
	}
	b.auth.MarkAuthenticated(g, time.Now())
	if g.Status.ReportsAuthenticatedAt != nil {
		t.Fatal("switched before every site authenticated")
	}
	if code := report(t, b.client(t, b.ca, pki.SiteIdentity("shop", "carts", "b")), b.tls.URL, "b"); code != http.StatusOK {
		t.Fatalf("authenticated report of b: %d", code)
	}
	if code := report(t, plain, b.plain.URL, "b"); code != http.StatusUnauthorized {
		t.Fatalf("plain report after the switch: %d", code)
	}
	// Views without a report stay open on the plain port.
	if resp, err := plain.Get(b.plain.URL + v1alpha1.PathActiveSite + "?namespace=shop&group=carts"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("plain view after the switch: %v %v", resp, err)
	}
	b.auth.MarkAuthenticated(g, time.Now())
	if g.Status.ReportsAuthenticatedAt == nil {
		t.Fatal("the switch was not marked in status")
	}
	// A restarted operator (fresh memory) reads the switch from status.
	restarted := newAuthBed(t, g.Status)
	if code := report(t, plain, restarted.plain.URL, "a"); code != http.StatusUnauthorized {
		t.Fatalf("plain report after a restart past the switch: %d", code)
	}
	if n := testutil.ToFloat64(restarted.auth.Rejected().WithLabelValues(RejectPlaintext)); n != 1 {
		t.Fatalf("plaintext rejections %v, want 1", n)
	}
}

func TestReportRejectedEventRateLimited(t *testing.T) {
	b := newAuthBed(t, v1alpha1.MysqlFailoverGroupStatus{})
	rec := &countingRecorder{}
	b.auth.recorder = rec
	now := time.Now()
	b.auth.now = func() time.Time { return now }
	c := b.client(t, nil, pki.Identity{})
	for range 5 {
		report(t, c, b.tls.URL, "a")
	}
	if rec.n != 1 {
		t.Fatalf("%d Events for a burst, want 1", rec.n)
	}
	now = now.Add(rejectEventGap)
	report(t, c, b.tls.URL, "a")
	if rec.n != 2 || rec.reason != v1alpha1.EventReportRejected {
		t.Fatalf("%d Events (%s) after the gap, want 2", rec.n, rec.reason)
	}
}

type countingRecorder struct {
	n      int
	reason string
}

func (r *countingRecorder) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.n++
	r.reason = reason
}

// TestPlainReportIsNeverEvidence: in the upgrade window a report over
// plain HTTP is answered (an old sidecar keeps its lease), but nothing in
// it counts: a forger on the plain port who copies the operator's id and
// a fresh observedAt into fenced=true confirms no fence and marks no
// adoption (review of issue 12: two writers otherwise).
func TestPlainReportIsNeverEvidence(t *testing.T) {
	b := newAuthBed(t, v1alpha1.MysqlFailoverGroupStatus{})
	q := "?namespace=shop&group=carts&site=a&generation=7&fenced=true&mysqld=up&viewOperator=" +
		b.reg.OperatorID() + "&viewObservedAt=" + time.Now().UTC().Format(time.RFC3339Nano)
	resp, err := http.Get(b.plain.URL + v1alpha1.PathActiveSite + q)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("plain report in the window answered %d, want 200 (the old sidecar keeps its view)", resp.StatusCode)
	}
	if sv := b.reg.Sidecar(carts, "a"); sv.report != nil || sv.held {
		t.Fatalf("a plain report became evidence: report %+v, held %v", sv.report, sv.held)
	}
}
