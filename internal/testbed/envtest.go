package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	externaldnsv1alpha1 "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ControlPlane is a real kube-apiserver and etcd started through envtest,
// with Bloodraven's CRDs and external-dns's DNSEndpoint CRD installed.
type ControlPlane struct {
	Config *rest.Config
	Client client.Client
	Scheme *k8sruntime.Scheme
	env    *envtest.Environment
}

// NewScheme returns a scheme with the core kinds, MysqlFailoverGroup and DNSEndpoint.
func NewScheme() (*k8sruntime.Scheme, error) {
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	if err := externaldnsv1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	// external-dns registers its kinds without the meta types; creates fail
	// with "v1.CreateOptions is not suitable for converting" unless added.
	metav1.AddToGroupVersion(s, schema.GroupVersion(externaldnsv1alpha1.GroupVersion))
	return s, nil
}

// RepoRoot finds the checkout's top folder from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// KubeAssets returns the folder holding kube-apiserver, etcd and kubectl, or an
// error that says how to get them.
func KubeAssets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cache := os.Getenv("BLOODRAVEN_CACHE")
		if cache == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return "", fmt.Errorf("kube assets: %w", err)
			}
			cache = filepath.Join(base, "bloodraven")
		}
		dir = filepath.Join(cache, "kube", "v1.36.3")
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run 'make deps' to build the control plane binaries", bin, dir)
		}
	}
	return dir, nil
}

// StartControlPlane starts envtest and installs the CRDs. Stop it with Stop.
func StartControlPlane() (*ControlPlane, error) {
	assets, err := KubeAssets()
	if err != nil {
		return nil, err
	}
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	root := RepoRoot()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{
			filepath.Join(root, "charts", "bloodraven", "crds"),
			filepath.Join(root, "test", "crds"),
		},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest with %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("envtest client: %w", err)
	}
	return &ControlPlane{Config: cfg, Client: c, Scheme: s, env: env}, nil
}

// Stop tears the control plane down.
func (c *ControlPlane) Stop() error {
	if c == nil || c.env == nil {
		return nil
	}
	return c.env.Stop()
}

// StartControlPlaneT starts a control plane for one test and stops it when the
// test ends. A missing binary fails the test with a message saying how to fix it.
func StartControlPlaneT(t testing.TB) *ControlPlane {
	t.Helper()
	cp, err := StartControlPlane()
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Logf("stop control plane: %v", err)
		}
	})
	return cp
}

// MainWithControlPlane is a TestMain body for packages that share one
// control plane: it starts it into *cp, runs the tests and stops it. A missing
// control plane fails the whole package with a message saying how to fix it;
// it never skips. Use it as os.Exit(testbed.MainWithControlPlane(m, &cp)).
func MainWithControlPlane(m *testing.M, cp **ControlPlane) int {
	c, err := StartControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: envtest control plane:", err)
		return 1
	}
	*cp = c
	defer func() { _ = c.Stop() }()
	return m.Run()
}
