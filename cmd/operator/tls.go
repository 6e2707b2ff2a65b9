package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/pki"
	"github.com/shipstream/bloodraven/pkg/pki/casecret"
)

// newKeeper loads the CA from its Secret in the operator's namespace,
// creating it when absent (retrying for a while: the API server may be
// starting too), and returns the Keeper of the operator's certificate.
func newKeeper(mgr ctrl.Manager, f flags) (*pki.Keeper, error) {
	ns := operatorNamespace()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		ca  *pki.CA
		err error
	)
	for {
		ca, err = casecret.Ensure(ctx, mgr.GetAPIReader(), mgr.GetClient(), ns, f.caSecret, time.Now())
		if err == nil {
			break
		}
		ctrl.Log.WithName("pki").Error(err, "load or create the CA; retrying")
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ca: %w", err)
		case <-time.After(2 * time.Second):
		}
	}
	req := pki.Request{Identity: pki.OperatorIdentity(), DNSNames: apiDNSNames(f.operatorURL, f.tlsDNSNames)}
	keeper := pki.NewKeeper(ca, req, time.Now)
	if err := mgr.Add(&authority.CARefresher{Keeper: keeper, Reader: mgr.GetAPIReader(), Namespace: ns,
		Name: f.caSecret, Log: ctrl.Log.WithName("pki")}); err != nil {
		return nil, fmt.Errorf("add ca refresher: %w", err)
	}
	return keeper, nil
}

// apiDNSNames are the serving certificate's DNS names: the host of the URL
// sidecars are given, its shorter and longer Service forms, and extra.
// Sidecars check the operator's identity rather than these names; they
// serve clients that check host names (curl, a probe over HTTPS).
func apiDNSNames(operatorURL, extra string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if u, err := url.Parse(operatorURL); err == nil {
		host := u.Hostname()
		add(host)
		if base, ok := strings.CutSuffix(host, ".svc"); ok {
			add(base + ".svc.cluster.local")
			add(base)
			if svc, _, ok := strings.Cut(base, "."); ok {
				add(svc)
			}
		}
	}
	for _, n := range strings.Split(extra, ",") {
		add(n)
	}
	return out
}

// addAPIServers runs the API on its HTTPS port and, unless disabled with
// "0", on its plain port (views, and reports of sidecars that predate TLS
// until their group switches).
func addAPIServers(mgr ctrl.Manager, f flags, h http.Handler, keeper *pki.Keeper) error {
	if err := mgr.Add(&authority.APIServer{Addr: f.apiTLSAddr, Handler: h, TLS: pki.ServerConfig(keeper)}); err != nil {
		return fmt.Errorf("add api (tls): %w", err)
	}
	if f.apiAddr == "0" || f.apiAddr == "" {
		return nil
	}
	if err := mgr.Add(&authority.APIServer{Addr: f.apiAddr, Handler: h}); err != nil {
		return fmt.Errorf("add api: %w", err)
	}
	return nil
}

// parseLabels reads "k=v,k=v".
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--operator-pod-labels item %q: want key=value", kv)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--operator-pod-labels is empty: the NetworkPolicy could not select the operator")
	}
	return out, nil
}
