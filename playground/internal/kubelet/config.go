package kubelet

import (
	"fmt"
	"net"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Config describes one process node.
type Config struct {
	Node      string     // node name
	Zone      string     // topology.kubernetes.io/zone label
	Index     int        // node number, unique in the cluster, from 1
	NodeIP    net.IP     // the node's address, on the core namespace's loopback
	PodCIDR   *net.IPNet // Pod IPs come from here
	CoreNetNS string     // name of the core network namespace
	NetNSBase string     // prefix for Pod network namespace names
	StateDir  string     // this node's folder: one sub-folder per Pod
	Images    Images
	Client    kubernetes.Interface

	// DNSServer and ClusterDomain make each Pod's /etc/resolv.conf.
	DNSServer     string
	ClusterDomain string
	// APIHost and APIPort become KUBERNETES_SERVICE_HOST and _PORT.
	APIHost, APIPort string

	BackoffInitial time.Duration // first restart delay; doubles up to BackoffMax
	BackoffMax     time.Duration
	// VolumeRefresh is how often a running Pod's ConfigMap, Secret,
	// downward API and projected volumes are read again and their changed
	// files rewritten (default 5 s; negative: never).
	VolumeRefresh time.Duration
	// CreatedDirs records mount points made on the host (see podexec).
	CreatedDirs string
	// OnNetworkChange is called after a Pod got or lost its IP.
	OnNetworkChange func()
	Logf            func(format string, args ...any)
}

func (c *Config) defaults() error {
	if c.Node == "" || c.NodeIP == nil || c.PodCIDR == nil || c.CoreNetNS == "" || c.Client == nil {
		return fmt.Errorf("kubelet config for %q lacks node name, node IP, pod CIDR, core netns or client", c.Node)
	}
	if c.BackoffInitial == 0 {
		c.BackoffInitial = time.Second
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = 10 * time.Second
	}
	if c.VolumeRefresh == 0 {
		c.VolumeRefresh = 5 * time.Second
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.OnNetworkChange == nil {
		c.OnNetworkChange = func() {}
	}
	return nil
}
