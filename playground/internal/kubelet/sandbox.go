package kubelet

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// ipPool hands out the addresses of a node's Pod range, skipping the node's
// own address, and moves forward so a fresh Pod rarely reuses a recent IP.
type ipPool struct {
	mu   sync.Mutex
	cidr *net.IPNet
	used map[string]bool
	next int
	size int
}

func newIPPool(cidr *net.IPNet) *ipPool {
	ones, bits := cidr.Mask.Size()
	return &ipPool{cidr: cidr, used: map[string]bool{}, next: 2, size: 1 << (bits - ones)}
}

func (p *ipPool) get() (net.IP, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.size {
		n := p.next
		p.next++
		if p.next >= p.size-1 {
			p.next = 2
		}
		ip := offset(p.cidr.IP, n)
		if !p.used[ip.String()] {
			p.used[ip.String()] = true
			return ip, nil
		}
	}
	return nil, fmt.Errorf("pod range %s is full", p.cidr)
}

func (p *ipPool) put(ip net.IP) {
	p.mu.Lock()
	delete(p.used, ip.String())
	p.mu.Unlock()
}

func offset(base net.IP, n int) net.IP {
	ip := make(net.IP, 4)
	copy(ip, base.To4())
	v := int(ip[0])<<24 | int(ip[1])<<16 | int(ip[2])<<8 | int(ip[3])
	v += n
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
}

// sandbox is a Pod's network namespace, its veth link and its folder.
type sandbox struct {
	netns string
	veth  string
	ip    net.IP
	dir   string
}

// newSandbox makes the Pod's namespace: eth0 carries ip/32 and routes
// everything through the node address on the core side.
func (pr *Provider) newSandbox(ctx context.Context, seq int, dir string) (*sandbox, error) {
	ip, err := pr.ips.get()
	if err != nil {
		return nil, err
	}
	sb := &sandbox{
		netns: fmt.Sprintf("%s-%d-%d", pr.cfg.NetNSBase, pr.cfg.Index, seq),
		veth:  fmt.Sprintf("v%dx%d", pr.cfg.Index, seq),
		ip:    ip,
		dir:   dir,
	}
	if err := sb.setup(ctx, pr.cfg); err != nil {
		sb.teardown(ctx)
		pr.ips.put(ip)
		return nil, err
	}
	return sb, nil
}

func (sb *sandbox) setup(ctx context.Context, cfg Config) error {
	if err := os.MkdirAll(filepath.Join(sb.dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("pod folder: %w", err)
	}
	_ = nsutil.Delete(ctx, sb.netns) // a leftover of an earlier try
	if err := nsutil.Create(ctx, sb.netns); err != nil {
		return fmt.Errorf("pod netns: %w", err)
	}
	node := cfg.NodeIP.String()
	err := nsutil.IPBatch(ctx, cfg.CoreNetNS, []string{
		fmt.Sprintf("link add %s type veth peer name eth0 netns %s", sb.veth, sb.netns),
		fmt.Sprintf("link set %s up", sb.veth),
		fmt.Sprintf("route add %s/32 dev %s", sb.ip, sb.veth),
	})
	if err != nil {
		return fmt.Errorf("pod link: %w", err)
	}
	err = nsutil.IPBatch(ctx, sb.netns, []string{
		fmt.Sprintf("addr add %s/32 dev eth0", sb.ip),
		"link set eth0 up",
		fmt.Sprintf("route add %s dev eth0 scope link", node),
		fmt.Sprintf("route add default via %s dev eth0", node),
	})
	if err != nil {
		return fmt.Errorf("pod addresses: %w", err)
	}
	return nil
}

// teardown kills anything left in the namespace and removes it; the veth
// pair and the route go with it.
func (sb *sandbox) teardown(ctx context.Context) {
	_ = nsutil.Delete(ctx, sb.netns)
}

// writeNetFiles writes the Pod's resolv.conf, hosts and hostname.
func (sb *sandbox) writeNetFiles(cfg Config, ns, hostname string) error {
	search := []string{ns + ".svc." + cfg.ClusterDomain, "svc." + cfg.ClusterDomain, cfg.ClusterDomain}
	resolv := fmt.Sprintf("nameserver %s\nsearch %s\noptions ndots:5\n", cfg.DNSServer, strings.Join(search, " "))
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n", sb.ip, hostname)
	files := map[string]string{"resolv.conf": resolv, "hosts": hosts, "hostname": hostname + "\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(sb.dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("write pod %s: %w", name, err)
		}
	}
	tmp := filepath.Join(sb.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o777); err != nil {
		return fmt.Errorf("pod tmp: %w", err)
	}
	return os.Chmod(tmp, 0o1777)
}
