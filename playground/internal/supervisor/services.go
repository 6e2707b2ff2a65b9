package supervisor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/shipstream/bloodraven/playground/internal/dns"
	"github.com/shipstream/bloodraven/playground/internal/faults"
	"github.com/shipstream/bloodraven/playground/internal/kubelet"
	"github.com/shipstream/bloodraven/playground/internal/proxy"
)

func (s *Supervisor) startServices(ctx context.Context) error {
	p, err := proxy.Start(s.ctx, s.client, s.cfg.ClusterID, APIServerIP, ServiceCIDR, s.logf)
	if err != nil {
		return err
	}
	s.proxy = p
	s.dns = &proxy.DNS{Proxy: p, Domain: "cluster.local", NetNS: s.cfg.ClusterID, Upstream: BindIP + ":53"}
	if err := s.dns.Serve(ClusterDNSIP + ":53"); err != nil {
		return err
	}
	s.info.ClusterDNS = ClusterDNSIP
	s.faults = &faults.Set{NetNS: s.cfg.ClusterID, Resolve: s.resolve}
	if err := s.faults.Apply(ctx); err != nil {
		return err
	}
	return startProvisioner(s.ctx, s.client, s.cfg.path("volumes"), s.logf)
}

func (s *Supervisor) nodeConfig(st site) kubelet.Config {
	return kubelet.Config{
		Node: st.name, Zone: st.name, Index: st.index, NodeIP: st.nodeIP, PodCIDR: st.cidr,
		CoreNetNS: s.cfg.ClusterID, NetNSBase: s.cfg.ClusterID, StateDir: s.cfg.path("nodes", st.name),
		Images: s.cfg.Images, Client: s.client, DNSServer: ClusterDNSIP, ClusterDomain: "cluster.local",
		APIHost: KubernetesIP, APIPort: "443",
		BackoffInitial: s.cfg.BackoffInitial, BackoffMax: s.cfg.BackoffMax, VolumeRefresh: s.cfg.VolumeRefresh,
		CreatedDirs: createdDirsFile, OnNetworkChange: s.networkChanged, Logf: s.logf,
	}
}

func (s *Supervisor) startNodes(ctx context.Context) error {
	errs := make(chan error, len(s.cfg.Sites))
	for _, st := range s.cfg.sites() {
		go func() { errs <- s.startNode(ctx, st) }()
	}
	var first error
	for range s.cfg.Sites {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Supervisor) startNode(ctx context.Context, st site) error {
	p := s.pkiDir()
	n, err := kubelet.StartNode(ctx, s.nodeConfig(st), filepath.Join(p, "node-"+st.name+".crt"), filepath.Join(p, "node-"+st.name+".key"))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.nodes[st.name] = n
	delete(s.down, st.name)
	s.mu.Unlock()
	return nil
}

// networkChanged reapplies the fault rules when a Pod got or lost an IP, so
// partitions that name Pods follow them.
func (s *Supervisor) networkChanged() {
	if s.faults == nil || len(s.faults.Partitions()) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		if err := s.faults.Apply(ctx); err != nil {
			s.logf("faults: %v", err)
		}
	}()
}

func (s *Supervisor) startDNS(ctx context.Context) error {
	for _, crd := range s.cfg.CRDs {
		if err := s.kubectl(ctx, "apply", "--server-side", "-f", crd); err != nil {
			return err
		}
	}
	if s.cfg.ExternalDNS == "" {
		return nil
	}
	cfg := &dns.Config{Dir: s.cfg.path("dns"), Zone: s.cfg.Zone, Addr: BindIP,
		Kubeconfig: s.info.CoreKubeconfig, OwnerID: s.cfg.ClusterID}
	named, edns, err := dns.Write(cfg)
	if err != nil {
		return err
	}
	p, err := s.startCore("named", named)
	if err != nil {
		return err
	}
	if err := s.waitTCP(ctx, p, BindIP+":53", 20*time.Second); err != nil {
		return err
	}
	if s.cfg.CRDs != nil {
		if err := s.kubectl(ctx, "wait", "--for=condition=Established", "--timeout=30s", "crd/dnsendpoints.externaldns.k8s.io"); err != nil {
			return err
		}
	}
	if _, err := s.startCore("external-dns", append([]string{s.cfg.ExternalDNS}, edns...)); err != nil {
		return err
	}
	s.info.DNSServer = BindIP
	s.info.Zone = cfg.Zone
	return os.WriteFile(s.cfg.path("dns", "tsig.secret"), []byte(cfg.Secret), 0o600)
}

// resolve turns a fault target into CIDRs: a site name, "apiserver",
// "clients", "dns", "operator", pod:NS/NAME, label:NS/SELECTOR (NS may be
// *), or ip:CIDR[,CIDR].
func (s *Supervisor) resolve(target string) ([]string, error) {
	if cidr, ok := s.info.Sites[target]; ok {
		return []string{cidr}, nil
	}
	switch target {
	case "apiserver", "control-plane":
		return []string{APIServerIP}, nil
	case "clients":
		return []string{ClientIP}, nil
	case "dns":
		return []string{ClusterDNSIP, BindIP}, nil
	case "operator":
		return s.podIPs("*", s.cfg.OperatorSelector, "")
	}
	kind, rest, ok := strings.Cut(target, ":")
	switch {
	case ok && kind == "ip":
		var out []string
		for _, c := range strings.Split(rest, ",") {
			if _, _, err := net.ParseCIDR(c); err != nil && net.ParseIP(c) == nil {
				return nil, fmt.Errorf("target %q: %q is no address or CIDR", target, c)
			}
			out = append(out, c)
		}
		return out, nil
	case ok && (kind == "pod" || kind == "label"):
		ns, v, ok := strings.Cut(rest, "/")
		if !ok {
			return nil, fmt.Errorf("target %q: want %s:NAMESPACE/%s", target, kind, map[string]string{"pod": "NAME", "label": "SELECTOR"}[kind])
		}
		if kind == "pod" {
			return s.podIPs(ns, "", v)
		}
		return s.podIPs(ns, v, "")
	}
	return nil, fmt.Errorf("unknown fault target %q (sites: %s; or apiserver, clients, dns, operator, pod:NS/NAME, label:NS/SELECTOR, ip:CIDR)", target, strings.Join(s.cfg.Sites, ", "))
}

func (s *Supervisor) podIPs(ns, selector, name string) ([]string, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", selector, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, n := range s.nodes {
		for _, p := range n.Provider.Pods() {
			match := (ns == "*" || p.Namespace == ns) && (name == "" || p.Name == name) && sel.Matches(labels.Set(p.Labels))
			if match && p.IP != "" && !seen[p.IP] {
				seen[p.IP] = true
				out = append(out, p.IP)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
