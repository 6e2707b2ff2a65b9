package scenario

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// impostor is a program in the cluster that answers a site's peer port as
// if it were that site's sidecar, over TLS with a certificate naming that
// site from a CA of its own, with a view it made up: the highest
// generation there is, naming a site of its choice, unsigned or with a
// signature of random bytes (every other answer). It sits on the clients
// address and joins the site's Service through an EndpointSlice of its own,
// as anything that gets endpoints into a Service does (a Pod carrying the
// Service's labels, say): the Service then sends it a share of the peers'
// new connections.
type impostor struct {
	g      *Group
	ln     net.Listener
	srv    *http.Server
	slice  string
	served atomic.Int64
	hellos atomic.Int64 // TLS handshakes begun: peers that dialled it
}

// impostorCert is a certificate naming site of the group, as the real one
// does, but from a CA of the attacker's own making.
func impostorCert(ns, group, site string) (tls.Certificate, error) {
	ca, err := pki.NewCA("impostor", time.Now(), pki.CAValidity)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("impostor CA: %w", err)
	}
	is, err := ca.Issue(pki.Request{Identity: pki.SiteIdentity(ns, group, site)}, time.Now())
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("impostor certificate: %w", err)
	}
	return is.TLS()
}

// impostorGeneration is the generation the impostor serves: no operator
// view can ever be newer.
const impostorGeneration = math.MaxInt64

// startImpostor answers on site's peer port with views naming names.
func (g *Group) startImpostor(ctx context.Context, site, names string) (*impostor, error) {
	cert, err := impostorCert(g.NS, g.Name, site)
	if err != nil {
		return nil, err
	}
	raw, err := g.e.C.Listen(0)
	if err != nil {
		return nil, err
	}
	im := &impostor{g: g, slice: routing.SiteName(g.Name, site) + "-impostor"}
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { im.hellos.Add(1); return nil, nil }})
	im.ln = ln
	mux := http.NewServeMux()
	mux.HandleFunc(v1alpha1.PathPeerActiveSite, func(w http.ResponseWriter, _ *http.Request) {
		n := im.served.Add(1)
		v := map[string]any{"namespace": g.NS, "group": g.Name, "activeSite": names,
			"generation": int64(impostorGeneration), "observedAt": time.Now().UTC(), "source": v1alpha1.SourceOperator}
		if n%2 == 0 {
			sig := make([]byte, 64)
			_, _ = rand.Read(sig)
			v["signature"], v["keyId"] = base64.StdEncoding.EncodeToString(sig), "forged"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	im.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = im.srv.Serve(ln) }()
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	ready, name, proto := true, routing.PortNameSidecar, corev1.ProtocolTCP
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: im.slice, Namespace: g.NS, Labels: map[string]string{
			discoveryv1.LabelServiceName: routing.SiteName(g.Name, site),
			discoveryv1.LabelManagedBy:   "playground-impostor"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{g.e.C.ClientAddr()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}
	if _, err := g.e.C.Client.DiscoveryV1().EndpointSlices(g.NS).Create(ctx, es, metav1.CreateOptions{}); err != nil {
		_ = im.srv.Close()
		return nil, fmt.Errorf("impostor endpoint in %s's Service: %w", site, err)
	}
	g.e.Logf("impostor on %s's peer port (%s:%d) serving generation %d naming %s",
		site, g.e.C.ClientAddr(), port, int64(impostorGeneration), names)
	return im, nil
}

// stop takes the impostor out of the Service and closes it; it returns how
// many views it served and how many TLS handshakes peers began with it.
func (im *impostor) stop() (served, hellos int64) {
	if im == nil {
		return 0, 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = im.g.e.C.Client.DiscoveryV1().EndpointSlices(im.g.NS).Delete(ctx, im.slice, metav1.DeleteOptions{})
	_ = im.srv.Close()
	return im.served.Load(), im.hellos.Load()
}

// forger keeps sending the operator's API a report, in the name of a site,
// that the site's mysqld is fenced: over plain HTTP, and over HTTPS without
// a client certificate (and without checking the server's), every half
// second, from the clients address.
type forger struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	// outcomes counts the answers by scheme: a status code, or the error.
	outcomes map[string]map[string]int
}

// startForger forges site's fenced=true report until stopped.
func (g *Group) startForger(ctx context.Context, site string) (*forger, error) {
	addr, err := g.e.operatorAPI(ctx)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set(v1alpha1.QueryNamespace, g.NS)
	q.Set(v1alpha1.QueryGroup, g.Name)
	q.Set(v1alpha1.QuerySite, site)
	q.Set(v1alpha1.QueryGeneration, "1")
	q.Set(v1alpha1.QueryFenced, "true")
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &forger{cancel: cancel, done: make(chan struct{}), outcomes: map[string]map[string]int{}}
	tr := &http.Transport{DialContext: g.e.C.Dial, DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // an attacker checks nothing
	client := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	go func() {
		defer close(f.done)
		for fctx.Err() == nil {
			for _, scheme := range []string{"http", "https"} {
				f.send(fctx, client, scheme+"://"+addr+v1alpha1.PathActiveSite+"?"+q.Encode(), scheme)
			}
			_ = sleepCtx(fctx, 500*time.Millisecond)
		}
	}()
	g.e.Logf("forger: fenced=true reports for %s to the operator at %s, plain HTTP and HTTPS, every 0.5s", site, addr)
	return f, nil
}

func (f *forger) send(ctx context.Context, c *http.Client, u, scheme string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return
	}
	outcome := ""
	resp, err := c.Do(req)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		outcome = "error: " + err.Error()
	default:
		_ = resp.Body.Close()
		outcome = strconv.Itoa(resp.StatusCode)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outcomes[scheme] == nil {
		f.outcomes[scheme] = map[string]int{}
	}
	f.outcomes[scheme][outcome]++
}

// stop ends the forger; it returns how many reports each scheme got
// answered 2xx, and an account of every outcome.
func (f *forger) stop() (map[string]int, string) {
	if f == nil {
		return nil, ""
	}
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	accepted := map[string]int{}
	var parts []string
	for _, scheme := range []string{"http", "https"} {
		var kinds []string
		n := 0
		for o, c := range f.outcomes[scheme] {
			kinds = append(kinds, fmt.Sprintf("%d × %s", c, o))
			n += c
			if strings.HasPrefix(o, "2") {
				accepted[scheme] += c
			}
		}
		sort.Strings(kinds)
		parts = append(parts, fmt.Sprintf("%s: %d sent (%s)", scheme, n, strings.Join(kinds, ", ")))
	}
	return accepted, strings.Join(parts, "; ")
}

// operatorAPI is the address of the operator's API Service (its "api" port).
func (e *Env) operatorAPI(ctx context.Context) (string, error) {
	svcs, err := e.C.Client.CoreV1().Services("bloodraven-system").List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		return "", fmt.Errorf("operator services: %w", err)
	}
	for _, s := range svcs.Items {
		for _, p := range s.Spec.Ports {
			if p.Name == "api" {
				return net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(p.Port))), nil
			}
		}
	}
	return "", fmt.Errorf("no operator Service with an api port among %d", len(svcs.Items))
}
