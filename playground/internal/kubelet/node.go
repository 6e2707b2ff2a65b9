package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// KubeletPort is where each node serves logs, exec and port-forward, on its
// node address in the core namespace.
const KubeletPort = 10250

// Node is one running process node: the virtual-kubelet controllers, the
// provider, and the kubelet API server.
type Node struct {
	Provider *Provider
	cancel   context.CancelFunc
	done     chan struct{}
	srv      *http.Server
}

// StartNode registers the node, starts its controllers and waits until it is
// ready. cert and key are the kubelet API's serving pair.
func StartNode(ctx context.Context, cfg Config, cert, key string) (*Node, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	var prov *Provider
	mux := http.NewServeMux()
	newProvider := func(nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		var err error
		prov, err = NewProvider(cfg)
		return prov, nil, err
	}
	vk, err := nodeutil.NewNode(cfg.Node, newProvider,
		nodeutil.WithClient(cfg.Client), nodeutil.AttachProviderRoutes(mux), withSpec(cfg))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Node, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n := &Node{Provider: prov, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(n.done); _ = vk.Run(runCtx) }()
	if err := vk.WaitReady(ctx, 30*time.Second); err != nil {
		n.Stop()
		return nil, fmt.Errorf("node %s not ready: %w", cfg.Node, err)
	}
	if err := n.serve(cfg, mux, cert, key); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

func withSpec(cfg Config) nodeutil.NodeOpt {
	return func(c *nodeutil.NodeConfig) error {
		c.NumWorkers = 4
		c.SkipDownwardAPIResolution = true // env is resolved at start, once the Pod IP is known
		c.InformerResyncPeriod = 30 * time.Second
		c.HTTPListenAddr = net.JoinHostPort(cfg.NodeIP.String(), fmt.Sprint(KubeletPort))
		c.TLSConfig = nil // served by Node.serve inside the core namespace
		n := &c.NodeSpec
		n.Labels["topology.kubernetes.io/zone"] = cfg.Zone
		n.Labels["topology.kubernetes.io/region"] = "local"
		n.Labels["bloodraven.local/process-node"] = "true"
		n.Labels["kubernetes.io/os"] = "linux"
		n.Spec.PodCIDR = cfg.PodCIDR.String()
		n.Spec.PodCIDRs = []string{cfg.PodCIDR.String()}
		res := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("32"),
			corev1.ResourceMemory: resource.MustParse("128Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
		n.Status.Capacity, n.Status.Allocatable = res, res
		n.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: cfg.NodeIP.String()},
			{Type: corev1.NodeHostName, Address: cfg.Node},
		}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = KubeletPort
		n.Status.NodeInfo = corev1.NodeSystemInfo{
			KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: "amd64",
			ContainerRuntimeVersion: "process://bloodraven",
		}
		return nil
	}
}

// serve runs the kubelet API (logs, exec, port-forward) on the node address.
func (n *Node) serve(cfg Config, mux *http.ServeMux, cert, key string) error {
	if cert == "" {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return fmt.Errorf("kubelet serving pair: %w", err)
	}
	l, err := nsutil.Listen(cfg.CoreNetNS, "tcp", net.JoinHostPort(cfg.NodeIP.String(), fmt.Sprint(KubeletPort)))
	if err != nil {
		return err
	}
	n.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = n.srv.ServeTLS(l, "", "") }()
	return nil
}

// Stop ends the node as if it lost power: heartbeats stop and every Pod's
// processes are killed at once, without status reports.
func (n *Node) Stop() {
	if n.srv != nil {
		_ = n.srv.Close()
	}
	n.cancel()
	if n.Provider != nil {
		n.Provider.Shutdown()
	}
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
	}
}
