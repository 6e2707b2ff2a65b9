package proxy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// Proxy keeps the Service DNAT table of the core namespace current.
type Proxy struct {
	netns       string
	hairpin     string // source address for a Pod that reaches itself through its Service
	serviceCIDR string
	services    corev1listers.ServiceLister
	slices      discoverylisters.EndpointSliceLister
	kick        chan struct{}
	logf        func(string, ...any)

	mu   sync.Mutex
	last string
}

// Start watches Services and EndpointSlices and applies rules until ctx ends.
func Start(ctx context.Context, client kubernetes.Interface, netns, hairpin, serviceCIDR string, logf func(string, ...any)) (*Proxy, error) {
	f := informers.NewSharedInformerFactory(client, time.Minute)
	p := &Proxy{
		netns: netns, hairpin: hairpin, serviceCIDR: serviceCIDR, logf: logf, kick: make(chan struct{}, 1),
		services: f.Core().V1().Services().Lister(),
		slices:   f.Discovery().V1().EndpointSlices().Lister(),
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.Kick() },
		UpdateFunc: func(any, any) { p.Kick() },
		DeleteFunc: func(any) { p.Kick() },
	}
	if _, err := f.Core().V1().Services().Informer().AddEventHandler(h); err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	if _, err := f.Discovery().V1().EndpointSlices().Informer().AddEventHandler(h); err != nil {
		return nil, fmt.Errorf("endpointslice informer: %w", err)
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("proxy: %v cache did not sync", typ)
		}
	}
	go p.loop(ctx)
	p.Kick()
	return p, nil
}

// Kick asks for the rules to be rebuilt.
func (p *Proxy) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *Proxy) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		}
		time.Sleep(20 * time.Millisecond) // let a burst of events settle
		if err := p.sync(ctx); err != nil && ctx.Err() == nil {
			p.logf("proxy: %v", err)
			time.AfterFunc(time.Second, p.Kick)
		}
	}
}

func (p *Proxy) sync(ctx context.Context) error {
	body, err := p.render()
	if err != nil {
		return err
	}
	p.mu.Lock()
	same := body == p.last
	p.mu.Unlock()
	if same {
		return nil
	}
	t0 := time.Now()
	if err := nsutil.NFT(ctx, p.netns, nsutil.ReplaceTable("ip", "brlc_proxy", body)); err != nil {
		return err
	}
	p.mu.Lock()
	p.last = body
	p.mu.Unlock()
	p.logf("proxy: rules updated (%d service ports) in %s", strings.Count(body, " jump svc")-strings.Count(body, "vmap"),
		time.Since(t0).Round(time.Millisecond))
	return nil
}

// backend is one ready endpoint of one Service port.
type backend struct{ ip, port string }

func (p *Proxy) render() (string, error) {
	svcs, err := p.services.List(labels.Everything())
	if err != nil {
		return "", fmt.Errorf("list services: %w", err)
	}
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].Namespace+svcs[i].Name < svcs[j].Namespace+svcs[j].Name })
	var b strings.Builder
	b.WriteString("  chain pre { type nat hook prerouting priority -100; policy accept; jump services; }\n")
	b.WriteString("  chain out { type nat hook output priority -100; policy accept; jump services; }\n")
	var dispatch, chains, hairpins []string
	seen := map[string]bool{}
	n := 0
	for _, svc := range svcs {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			bes := p.backends(svc, sp)
			if len(bes) == 0 {
				continue
			}
			n++
			proto := strings.ToLower(string(sp.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			dispatch = append(dispatch, fmt.Sprintf("    ip daddr %s %s dport %d jump svc%d", svc.Spec.ClusterIP, proto, sp.Port, n))
			chains = append(chains, svcChain(n, proto, bes)...)
			for _, be := range bes {
				if !seen[be.ip] {
					seen[be.ip] = true
					hairpins = append(hairpins, fmt.Sprintf("    ct status dnat ip saddr %s ip daddr %s snat to %s", be.ip, be.ip, p.hairpin))
				}
			}
		}
	}
	b.WriteString("  chain services {\n" + strings.Join(dispatch, "\n") + "\n  }\n")
	// A Service address left untranslated has no ready endpoint: refuse at
	// once, as kube-proxy does, so no client waits on a SYN nobody answers.
	for _, hook := range []string{"output", "forward"} {
		fmt.Fprintf(&b, "  chain no_endpoints_%[1]s {\n    type filter hook %[1]s priority 0; policy accept;\n"+
			"    ip daddr %[2]s meta l4proto tcp reject with tcp reset\n    ip daddr %[2]s reject\n  }\n", hook, p.serviceCIDR)
	}
	b.WriteString(strings.Join(chains, ""))
	b.WriteString("  chain post {\n    type nat hook postrouting priority 100; policy accept;\n" + strings.Join(hairpins, "\n") + "\n  }\n")
	return b.String(), nil
}

func svcChain(n int, proto string, bes []backend) []string {
	if len(bes) == 1 {
		return []string{fmt.Sprintf("  chain svc%d { meta l4proto %s dnat to %s:%s; }\n", n, proto, bes[0].ip, bes[0].port)}
	}
	var out, vm []string
	for i, be := range bes {
		out = append(out, fmt.Sprintf("  chain svc%de%d { meta l4proto %s dnat to %s:%s; }\n", n, i, proto, be.ip, be.port))
		vm = append(vm, fmt.Sprintf("%d : jump svc%de%d", i, n, i))
	}
	head := fmt.Sprintf("  chain svc%d { numgen random mod %d vmap { %s }; }\n", n, len(bes), strings.Join(vm, ", "))
	return append([]string{head}, out...)
}

// backends lists the ready endpoints of a Service port from its slices.
func (p *Proxy) backends(svc *corev1.Service, sp corev1.ServicePort) []backend {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	slices, err := p.slices.EndpointSlices(svc.Namespace).List(sel)
	if err != nil {
		return nil
	}
	var out []backend
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		port := slicePort(s, sp.Name)
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				out = append(out, backend{ip: a, port: fmt.Sprint(port)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ip < out[j].ip })
	return out
}

func slicePort(s *discoveryv1.EndpointSlice, name string) int32 {
	for _, p := range s.Ports {
		pn := ""
		if p.Name != nil {
			pn = *p.Name
		}
		if pn == name && p.Port != nil {
			return *p.Port
		}
	}
	return 0
}

// Services exposes the Service lister to the DNS server.
func (p *Proxy) Services() corev1listers.ServiceLister { return p.services }

// Slices exposes the EndpointSlice lister to the DNS server.
func (p *Proxy) Slices() discoverylisters.EndpointSliceLister { return p.slices }
