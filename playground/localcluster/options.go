package localcluster

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/shipstream/bloodraven/playground/internal/images"
	"github.com/shipstream/bloodraven/playground/internal/kubelet"
	"github.com/shipstream/bloodraven/playground/internal/proc"
)

// Pinned versions of the binaries that hack/ scripts build into the cache.
const (
	KubeVersion        = "v1.36.3"
	ExternalDNSVersion = "v0.22.0"
)

// Image says which local program stands for a container image; see
// kubelet.Image. Images maps image names to them.
type (
	Image  = kubelet.Image
	Images = kubelet.Images
)

// Options configures Up. The zero value works from the repository.
type Options struct {
	// StateDir holds certificates, logs, volumes and Pod folders. Empty makes
	// a new folder under /tmp; Down removes a folder it made.
	StateDir string
	// Sites names one node per site (default site-a, site-b), labelled
	// topology.kubernetes.io/zone=<site>.
	Sites []string
	// Images is merged over DefaultImages.
	Images Images
	// RepoRoot locates bin/operator and bin/sidecar; default: the folder of
	// go.mod above the working directory.
	RepoRoot string
	// CacheDir holds the pinned binaries; default $BLOODRAVEN_CACHE, else
	// $XDG_CACHE_HOME/bloodraven, else ~/.cache/bloodraven.
	CacheDir string
	// NoDNS skips BIND and external-dns.
	NoDNS bool
	// Zone is the DNS zone that external-dns writes (default bloodraven.test).
	Zone string
	// CRDs are extra CRD files to apply (the DNSEndpoint CRD always is).
	CRDs []string
	// OperatorSelector finds the operator's Pods for the "operator" fault
	// target (default app.kubernetes.io/name=bloodraven, the chart's label).
	OperatorSelector string
	// Progress receives one line per start-up step (default: discarded).
	Progress io.Writer
	// Detach lets the cluster outlive the calling process (CLI "up -d").
	// Otherwise it goes down when the caller exits, however it exits.
	Detach bool
	// BackoffInitial and BackoffMax bound the container restart delay
	// (defaults 1s and 10s; the real kubelet uses 10s and 5m).
	BackoffInitial, BackoffMax time.Duration
	// VolumeRefresh is how often the kubelet rewrites a running Pod's
	// ConfigMap, Secret, downward API and projected volumes from their
	// sources (default 5 s; the real kubelet takes up to about a minute;
	// negative: never).
	VolumeRefresh time.Duration
	// Verbose is passed to the supervisor (its log, StateDir/supervisor.log,
	// always has Pod events and errors).
	Verbose bool
	// Timeout bounds Up (default 2 minutes).
	Timeout time.Duration
	// KeepState keeps a state folder that Up made when Down runs, for its
	// logs (set by the environment variable LOCALCLUSTER_KEEP_STATE=1 too).
	KeepState bool
}

// DefaultImages maps the images the project uses to local programs:
// mariadb to a built-in entrypoint around mariadbd, the operator and sidecar
// images to bin/operator and bin/sidecar, and http-echo to a tiny server.
func DefaultImages(repoRoot string) Images {
	self := proc.Self
	return Images{
		"mariadb": {
			Entrypoint:  []string{self, images.Arg, "mariadb"},
			PrivateDirs: []string{"/var/lib/mysql", "/run/mysqld", "/etc/mysql/conf.d", "/etc/mysql/mariadb.conf.d"},
		},
		"bloodraven-operator": {Entrypoint: []string{filepath.Join(repoRoot, "bin", "operator")}},
		"bloodraven-sidecar":  {Entrypoint: []string{filepath.Join(repoRoot, "bin", "sidecar")}},
		"http-echo":           {Entrypoint: []string{self, images.Arg, "http-echo"}},
	}
}

func (o *Options) defaults() error {
	if len(o.Sites) == 0 {
		o.Sites = []string{"site-a", "site-b"}
	}
	if o.RepoRoot == "" {
		o.RepoRoot = findRepoRoot()
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCache()
	}
	if o.Zone == "" {
		o.Zone = "bloodraven.test"
	}
	if o.OperatorSelector == "" {
		o.OperatorSelector = "app.kubernetes.io/name=bloodraven"
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if os.Getenv("LOCALCLUSTER_KEEP_STATE") == "1" {
		o.KeepState = true
	}
	if os.Getenv("LOCALCLUSTER_VERBOSE") == "1" {
		o.Verbose = true
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	imgs := DefaultImages(o.RepoRoot)
	for k, v := range o.Images {
		imgs[k] = v
	}
	o.Images = imgs
	for _, s := range o.Sites {
		if len(s) == 0 || len(s) > 63 {
			return fmt.Errorf("site name %q must have 1 to 63 characters", s)
		}
	}
	if len(o.Sites) > 200 {
		return fmt.Errorf("at most 200 sites")
	}
	return nil
}

func defaultCache() string {
	if c := os.Getenv("BLOODRAVEN_CACHE"); c != "" {
		return c
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "bloodraven")
}

func findRepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

// KubeBinDir is where hack/kube-binaries.sh puts the control plane.
func (o *Options) KubeBinDir() string { return filepath.Join(o.CacheDir, "kube", KubeVersion) }

// ExternalDNSBin is where hack/external-dns.sh puts external-dns.
func (o *Options) ExternalDNSBin() string {
	return filepath.Join(o.CacheDir, "external-dns", ExternalDNSVersion, "external-dns")
}
