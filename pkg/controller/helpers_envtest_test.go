//go:build envtest

package controller_test

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/mysql"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/sidecar"
)

// testViewSigner signs the test operator's views; testViewKeys, the test
// sidecars' key ring, accepts them.
var testViewSigner, testViewKeys = func() (*protocol.Signer, *protocol.KeyRing) {
	s, err := protocol.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		panic(err)
	}
	k, err := protocol.NewKeyRing(s.Public())
	if err != nil {
		panic(err)
	}
	return s, k
}()

// startSidecars runs the real sidecar (pkg/sidecar's Runner) for each named
// site, next to its test-bed mysqld, asking the operator's API and each
// other. They stop when the test ends.
func (e *env) startSidecars(sites ...string) {
	e.t.Helper()
	handlers := make([]atomic.Pointer[http.Handler], len(sites))
	urls := make([]string, len(sites))
	for i := range sites {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h := handlers[i].Load(); h != nil {
				(*h).ServeHTTP(w, r)
				return
			}
			http.Error(w, "no view", http.StatusServiceUnavailable)
		}))
		e.t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	e.noteSidecars(sites, urls)
	lease, interval := e.sidecarLeaseAndInterval()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, len(sites))
	for i, s := range sites {
		var peers []sidecar.Peer
		for j, p := range sites {
			if j != i {
				peers = append(peers, sidecar.Peer{Name: p, URL: urls[j]})
			}
		}
		inst, err := mysql.Open(mysql.Config{Addr: e.db.Addr(e.index(s)), User: e.db.Accounts.Operator.User,
			Password: e.db.Accounts.Operator.Password, Flavor: v1alpha1.FlavorMariaDB,
			AppUsers: []string{e.db.Accounts.Application.User}, DialTimeout: time.Second})
		if err != nil {
			e.t.Fatal(err)
		}
		cfg := sidecar.Config{Settings: sidecar.Settings{Namespace: e.ns, Group: "orders", Site: s,
			LeaseTimeout: lease, PeerCheckInterval: interval, Keys: testViewKeys},
			OperatorURL: e.api.URL, Peers: peers, Logger: slog.New(slog.DiscardHandler),
			// Evidence that mysqld is gone, as the Pod's sidecar has it.
			Process: sidecar.Process{TCPAddr: e.db.Addr(e.index(s)),
				PIDFile: filepath.Join(filepath.Dir(e.db.ConfigFile(e.index(s))), "mysqld.pid")}}
		r, err := sidecar.NewRunner(cfg, inst, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		h := r.Handler()
		handlers[i].Store(&h)
		go func() {
			defer func() { _ = inst.Close(); done <- struct{}{} }()
			_ = r.Run(ctx)
		}()
	}
	e.t.Cleanup(func() {
		cancel()
		for range sites {
			<-done
		}
	})
}

// proxy puts an embedded Toxiproxy link between the operator and a site's
// mysqld; replicas still reach the site directly.
func (e *env) proxy(site string) *toxiproxy.Proxy {
	e.t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "mariadb-"+site, "127.0.0.1:0", e.db.Addr(e.index(site)))
	if err := srv.Collection.Add(p, true); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(p.Stop)
	e.mu.Lock()
	e.addrs[site] = p.Listen
	e.mu.Unlock()
	return p
}

// blackhole makes the link swallow everything without closing connections.
func (e *env) blackhole(p *toxiproxy.Proxy) {
	e.t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		js := `{"name":"blackhole-` + stream + `","type":"timeout","stream":"` + stream + `","attributes":{"timeout":0}}`
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// events lists the group's Events with a reason.
func (e *env) events(reason string) []eventsv1.Event {
	e.t.Helper()
	var list eventsv1.EventList
	if err := cp.Client.List(context.Background(), &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatalf("events: %v", err)
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Reason == reason && ev.Regarding.Name == "orders" {
			out = append(out, ev)
		}
	}
	return out
}

// podRole is the role label of a site's fake Pod.
func (e *env) podRole(site string) string {
	var p corev1.Pod
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "orders-" + site + "-0"}, &p); err != nil {
		e.t.Fatalf("pod: %v", err)
	}
	return p.Labels[v1alpha1.LabelRole]
}

// dnsTarget is the DNSEndpoint's target and the cluster IP of site's Service.
func (e *env) dnsTarget(site string) (target, siteIP string) {
	var ep externaldns.DNSEndpoint
	if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: routing.DNSEndpointName("orders")}, &ep); err != nil {
		return "", ""
	}
	var svc corev1.Service
	_ = cp.Client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: routing.SiteName("orders", site)}, &svc)
	if len(ep.Spec.Endpoints) == 0 || len(ep.Spec.Endpoints[0].Targets) == 0 {
		return "", svc.Spec.ClusterIP
	}
	return ep.Spec.Endpoints[0].Targets[0], svc.Spec.ClusterIP
}

// counter reads a counter of the running operator.
func (e *env) counter(c *prometheus.CounterVec, labels ...string) float64 {
	return testutil.ToFloat64(c.WithLabelValues(labels...))
}

// keepAsking stands in for the sites' sidecars where a test runs none: it
// asks the operator's API for the view every 100 ms, with a plain report
// holding the group's generation, until the test ends. Every step that
// makes a site writable needs that site's sidecar asking
// (topology.SidecarAsking). It never fences anything.
func (e *env) keepAsking(sites ...string) { e.keepAskingHolding(0, sites...) }

// keepAskingHolding is keepAsking with the reports holding generation held
// (0: the group's), as sidecars that have not adopted a newer view.
func (e *env) keepAskingHolding(held int64, sites ...string) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			g := &v1alpha1.MysqlFailoverGroup{}
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "orders"}, g); err == nil {
				gen := g.Status.TopologyGeneration
				if held > 0 {
					gen = held
				}
				for _, s := range sites {
					e.ask(ctx, s, gen)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
}

// ask is one plain report of site's sidecar holding gen; errors are ignored
// (the operator may be down).
func (e *env) ask(ctx context.Context, site string, gen int64) {
	url := e.api.URL + v1alpha1.PathActiveSite + "?namespace=" + e.ns + "&group=orders&site=" + site +
		"&fenced=false&mysqld=up&generation=" + strconv.FormatInt(gen, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
}
