package localcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/supervisor"
)

// Kill sends SIGKILL to a container's process group; the kubelet restarts
// it as the Pod's restartPolicy says. An empty container names the Pod's
// first container.
func (c *Cluster) Kill(ctx context.Context, namespace, pod, container string) error {
	return c.signal(ctx, namespace, pod, container, "KILL")
}

// Freeze stops a container's processes with SIGSTOP; Thaw resumes them.
func (c *Cluster) Freeze(ctx context.Context, namespace, pod, container string) error {
	return c.signal(ctx, namespace, pod, container, "STOP")
}

// Thaw resumes a frozen container with SIGCONT.
func (c *Cluster) Thaw(ctx context.Context, namespace, pod, container string) error {
	return c.signal(ctx, namespace, pod, container, "CONT")
}

func (c *Cluster) signal(ctx context.Context, ns, pod, container, sig string) error {
	return c.ctl.Call(ctx, "signal", supervisor.Request{Namespace: ns, Pod: pod, Container: container, Signal: sig})
}

// StopNode fails a site's node at once: its processes die, its heartbeats
// stop, and packets to and from its Pods are dropped.
func (c *Cluster) StopNode(ctx context.Context, site string) error {
	return c.ctl.Call(ctx, "node-stop", supervisor.Request{Site: site})
}

// StartNode brings a stopped node back; Pods still bound to it restart.
func (c *Cluster) StartNode(ctx context.Context, site string) error {
	return c.ctl.Call(ctx, "node-start", supervisor.Request{Site: site})
}

// Partition drops every packet between targets a and b. A target is a site
// name, "operator" (Pods matching Options.OperatorSelector), "apiserver",
// "clients" (the source of Dial), "dns", pod:NS/NAME, label:NS/SELECTOR
// (NS may be *), or ip:CIDR[,CIDR...]. Pod targets follow Pod IP changes.
func (c *Cluster) Partition(ctx context.Context, a, b string) error {
	return c.ctl.Call(ctx, "partition", supervisor.Request{A: a, B: b})
}

// Heal removes the partition between a and b.
func (c *Cluster) Heal(ctx context.Context, a, b string) error {
	if a == "" || b == "" {
		return fmt.Errorf("heal needs two targets (HealAll heals every partition)")
	}
	return c.ctl.Call(ctx, "heal", supervisor.Request{A: a, B: b})
}

// HealAll removes every partition.
func (c *Cluster) HealAll(ctx context.Context) error {
	return c.ctl.Call(ctx, "heal", supervisor.Request{})
}

// Status returns the supervisor's view, with active partitions and stopped sites.
func (c *Cluster) Status(ctx context.Context) (*supervisor.Status, error) {
	return c.ctl.Status(ctx)
}

// Dial connects to addr (a Pod IP, a Service IP, ...) from inside the core
// namespace, with the "clients" address as source.
func (c *Cluster) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.dialFrom(ctx, supervisor.ClientIP, network, addr)
}

// DialFrom connects as if from a site: the source is that site's node
// address, so partitions of the site apply.
func (c *Cluster) DialFrom(ctx context.Context, site, network, addr string) (net.Conn, error) {
	cidr, ok := c.Info.Sites[site]
	if !ok {
		return nil, fmt.Errorf("unknown site %q", site)
	}
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("site %s range %q: %w", site, cidr, err)
	}
	ip = ip.To4()
	ip[3] = 1
	return c.dialFrom(ctx, ip.String(), network, addr)
}

func (c *Cluster) dialFrom(ctx context.Context, src, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := nsutil.Do(c.ID, func() error {
		d := net.Dialer{}
		if network == "tcp" || network == "tcp4" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
		}
		var err error
		conn, err = d.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s from %s: %w", addr, src, err)
	}
	return conn, nil
}

// HTTPGet fetches http://addr/path from inside the core namespace.
func (c *Cluster) HTTPGet(ctx context.Context, addr, path string) (string, error) {
	tr := &http.Transport{DialContext: c.Dial, DisableKeepAlives: true}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s%s: status %d", addr, path, resp.StatusCode)
	}
	return string(b), nil
}
