package supervisor

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/kubelet"
)

// Fixed addresses inside the core namespace.
const (
	APIServerIP  = "10.250.0.1"  // kube-apiserver, etcd's peer, hairpin source
	ClientIP     = "10.250.0.2"  // source of connections that tests make
	ClusterDNSIP = "10.250.0.10" // cluster DNS
	BindIP       = "10.250.0.53" // BIND, the external-dns zone
	ServiceCIDR  = "10.96.0.0/16"
	KubernetesIP = "10.96.0.1"
	APIPort      = 6443
)

// Config is what localcluster hands to the supervisor, as JSON.
type Config struct {
	ClusterID        string         `json:"clusterID"` // also the core netns name and prefix of every other
	StateDir         string         `json:"stateDir"`
	Sites            []string       `json:"sites"`
	KubeBinDir       string         `json:"kubeBinDir"`
	ExternalDNS      string         `json:"externalDNS"` // binary; empty runs no external DNS
	Zone             string         `json:"zone"`
	Images           kubelet.Images `json:"images"`
	OperatorSelector string         `json:"operatorSelector"`
	CRDs             []string       `json:"crds"` // YAML files applied once the API server is up
	WatchStdin       bool           `json:"watchStdin"`
	BackoffInitial   time.Duration  `json:"backoffInitial"`
	BackoffMax       time.Duration  `json:"backoffMax"`
	VolumeRefresh    time.Duration  `json:"volumeRefresh"` // see kubelet.Config
	Verbose          bool           `json:"verbose"`
}

// Info is what the supervisor reports once the cluster is ready.
type Info struct {
	Kubeconfig     string            `json:"kubeconfig"`     // for the host: https://127.0.0.1:port
	CoreKubeconfig string            `json:"coreKubeconfig"` // for processes in the core namespace
	Server         string            `json:"server"`
	Socket         string            `json:"socket"`
	NetNS          string            `json:"netns"`
	SupervisorPID  int               `json:"supervisorPID"`
	Sites          map[string]string `json:"sites"` // site -> Pod CIDR
	DNSServer      string            `json:"dnsServer"`
	ClusterDNS     string            `json:"clusterDNS"`
	Zone           string            `json:"zone"`
}

// ReadConfig loads the config file.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read supervisor config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decode supervisor config: %w", err)
	}
	return &c, nil
}

// site describes one site node's addresses.
type site struct {
	name   string
	index  int
	nodeIP net.IP
	cidr   *net.IPNet
}

func (c *Config) sites() []site {
	var out []site
	for i, name := range c.Sites {
		_, cidr, _ := net.ParseCIDR(fmt.Sprintf("10.250.%d.0/24", i+1))
		out = append(out, site{name: name, index: i + 1, nodeIP: net.ParseIP(fmt.Sprintf("10.250.%d.1", i+1)).To4(), cidr: cidr})
	}
	return out
}

func (c *Config) path(parts ...string) string {
	return filepath.Join(append([]string{c.StateDir}, parts...)...)
}

// Paths used by both sides.
const (
	InfoFile       = "info.json"
	ConfigFile     = "supervisor.json"
	SocketFile     = "control.sock"
	SupervisorLog  = "supervisor.log"
	ReadyPrefix    = "ready: "
	ProgressPrefix = "progress: "
)

// EtcdDir is where etcd keeps its data: on tmpfs, for speed.
func (c *Config) EtcdDir() string { return filepath.Join("/dev/shm", c.ClusterID+"-etcd") }
