package clone_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shipstream/bloodraven/pkg/clone"
	"github.com/shipstream/bloodraven/pkg/pki"
)

func TestParseBinlogInfo(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		err            error
	}{
		{name: "one domain", in: "mysql-bin.000003\t1234\t0-1-42\n", want: "0-1-42"},
		{name: "several domains", in: "mysql-bin.000003\t1234\t0-1-42,1-2-7\n", want: "0-1-42,1-2-7"},
		{name: "domains split by a space", in: "mysql-bin.000003\t1234\t0-1-42, 1-2-7", want: "0-1-42,1-2-7"},
		{name: "no GTID written yet", in: "mysql-bin.000001\t328\n", want: ""},
		{name: "empty file", in: "", err: clone.ErrNoPosition},
		{name: "garbage position", in: "mysql-bin.000001\t328\t0-1-x'", err: clone.ErrNoPosition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := clone.ParseBinlogInfo(tc.in)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestThrottle(t *testing.T) {
	const size, rate = 256 << 10, 1 << 20 // a quarter of a second's worth
	for _, tc := range []struct {
		name     string
		rate     int64
		min, max time.Duration
	}{
		{name: "unlimited", rate: 0, max: 100 * time.Millisecond},
		{name: "one MiB per second", rate: rate, min: 120 * time.Millisecond, max: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			n, err := io.Copy(io.Discard, clone.Throttle(context.Background(), bytes.NewReader(make([]byte, size)), tc.rate))
			took := time.Since(start)
			if err != nil || n != size {
				t.Fatalf("copied %d, %v", n, err)
			}
			if took < tc.min || took > tc.max {
				t.Fatalf("took %s, want within %s..%s", took, tc.min, tc.max)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := io.Copy(io.Discard, clone.Throttle(ctx, bytes.NewReader(make([]byte, 4<<20)), 1<<20))
		if err == nil {
			t.Fatal("a cancelled throttled copy finished")
		}
	})
}

// pkiBed issues certificates from one CA.
type pkiBed struct{ ca *pki.CA }

func newPKI(t testing.TB) pkiBed {
	t.Helper()
	ca, err := pki.NewCA("test", time.Now(), pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	return pkiBed{ca: ca}
}

func (b pkiBed) source(t testing.TB, id pki.Identity) pki.StaticSource {
	t.Helper()
	is, err := b.ca.Issue(pki.Request{Identity: id}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := is.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return pki.StaticSource{Cert: &c, Roots: b.ca.Pool()}
}

// serveTLS serves h over TLS with src and returns its https URL. Its
// server's read and write timeouts are a second, far shorter than a clone:
// cmd/sidecar's server has such timeouts, sized for small answers.
func serveTLS(t testing.TB, src pki.Source, h http.Handler) string {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.ReadTimeout, s.Config.WriteTimeout = time.Second, time.Second
	s.Listener = tls.NewListener(s.Listener, pki.ServerConfig(src))
	s.Start()
	t.Cleanup(s.Close)
	return strings.Replace(s.URL, "http://", "https://", 1)
}

// client presents src and expects the server to be want.
func client(src pki.Source, want pki.Identity) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientConfig(src, want, time.Now)}}
}

// TestGate: only the operator and the group's other sites may pull a
// clone; everyone else is refused, counted, and never reaches the donor.
func TestGate(t *testing.T) {
	b, other := newPKI(t), newPKI(t)
	iad := pki.SiteIdentity("shop", "orders", "iad")
	reg := prometheus.NewRegistry()
	reached := 0
	h := clone.Gate{TLS: b.source(t, iad), Namespace: "shop", Group: "orders", Site: "iad", Registerer: reg}.
		Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached++; _, _ = io.WriteString(w, "stream") }))
	url := serveTLS(t, b.source(t, iad), h) + clone.PathClone
	for _, tc := range []struct {
		name   string
		client *http.Client
		code   int
		reason string
	}{
		{"peer site of the group", client(b.source(t, pki.SiteIdentity("shop", "orders", "pdx")), iad), 200, ""},
		{"the operator", client(b.source(t, pki.OperatorIdentity()), iad), 200, ""},
		{"the donor itself", client(b.source(t, iad), iad), 403, clone.RejectWrongIdentity},
		{"a site of another group", client(b.source(t, pki.SiteIdentity("shop", "billing", "pdx")), iad), 403, clone.RejectWrongIdentity},
		{"a site of another namespace", client(b.source(t, pki.SiteIdentity("other", "orders", "pdx")), iad), 403, clone.RejectWrongIdentity},
		{"another CA's certificate", client(pki.StaticSource{Cert: other.source(t, pki.SiteIdentity("shop", "orders", "pdx")).Cert, Roots: b.ca.Pool()}, iad), 401, clone.RejectUntrusted},
		{"no certificate", client(pki.StaticSource{Roots: b.ca.Pool()}, iad), 401, clone.RejectNoCertificate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, counted := reached, 0.0
			if tc.reason != "" {
				counted = counterValue(t, reg, tc.reason)
			}
			resp, err := tc.client.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if tc.code != 200 {
				if reached != before {
					t.Fatal("a refused request reached the donor")
				}
				if got := counterValue(t, reg, tc.reason); got != counted+1 {
					t.Fatalf("%s counted %v, want %v", tc.reason, got, counted+1)
				}
			}
		})
	}
	t.Run("no TLS refuses everyone", func(t *testing.T) {
		s := httptest.NewServer(clone.Gate{Namespace: "shop", Group: "orders", Site: "iad"}.Wrap(http.NotFoundHandler()))
		defer s.Close()
		resp, err := http.Get(s.URL + clone.PathClone)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
	})
}

// counterValue reads MetricRejectedClones{reason} from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != clone.MetricRejectedClones {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{reason=%q}", clone.MetricRejectedClones, reason)
	return 0
}

// TestReceiverOrder: steps refuse to run out of order, and Install never
// touches a datadir that holds anything.
func TestReceiverOrder(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	r := &clone.Receiver{URL: "https://unused", Client: http.DefaultClient, Dir: filepath.Join(dir, "work"), DataDir: data}
	ctx := context.Background()
	if err := r.Prepare(ctx); !errors.Is(err, clone.ErrOutOfOrder) {
		t.Fatalf("prepare before fetch: %v", err)
	}
	if err := r.Install(ctx); !errors.Is(err, clone.ErrOutOfOrder) {
		t.Fatalf("install before prepare: %v", err)
	}
	if _, err := r.Position(); !errors.Is(err, clone.ErrOutOfOrder) {
		t.Fatalf("position before prepare: %v", err)
	}
	if r.Done() != clone.StepNone {
		t.Fatalf("done %q", r.Done())
	}
}

// TestReceiverRefusedStream: a donor that refuses, or a stream without the
// donor's closing trailer, leaves no staging behind and no step done.
func TestReceiverRefusedStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		err     error
	}{
		{"forbidden", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }, clone.ErrRefused},
		{"busy", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }, clone.ErrRefused},
		{"failed backup", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Trailer", clone.TrailerResult)
			w.WriteHeader(http.StatusOK)
			w.Header().Set(clone.TrailerResult, "error: mariadb-backup exited 1")
		}, clone.ErrStreamIncomplete},
		{"no trailer", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }, clone.ErrStreamIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireBinary(t, "mbstream")
			s := httptest.NewServer(tc.handler)
			defer s.Close()
			work := filepath.Join(t.TempDir(), "work")
			r := &clone.Receiver{URL: s.URL, Client: s.Client(), Dir: work, DataDir: t.TempDir()}
			err := r.Fetch(context.Background())
			if !errors.Is(err, tc.err) {
				t.Fatalf("fetch: %v, want %v", err, tc.err)
			}
			if r.Done() != clone.StepNone {
				t.Fatalf("done %q after a failed fetch", r.Done())
			}
			if _, err := os.Stat(filepath.Join(work, "backup")); !os.IsNotExist(err) {
				t.Fatalf("staging left behind: %v", err)
			}
		})
	}
}

// requireBinary fails the test loudly when a tool is missing.
func requireBinary(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is needed (make deps installs mariadb-backup): %v", name, err)
	}
}
