package scalebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// OperatorNamespace holds the operator's CA Secret.
const OperatorNamespace = "bloodraven-system"

// Cluster is an envtest API server with the CRDs, and a kubeconfig file
// for the operator process.
type Cluster struct {
	Config     *rest.Config
	Client     client.WithWatch
	Kubeconfig string
	env        *envtest.Environment
}

// StartCluster starts envtest with the chart's CRDs and writes a
// kubeconfig of an admin user into dir.
func StartCluster(dir string) (*Cluster, error) {
	assets, err := testbed.KubeAssets()
	if err != nil {
		return nil, err
	}
	s, err := testbed.NewScheme()
	if err != nil {
		return nil, err
	}
	root := testbed.RepoRoot()
	env := &envtest.Environment{BinaryAssetsDirectory: assets, Scheme: s, ErrorIfCRDPathMissing: true,
		CRDDirectoryPaths: []string{filepath.Join(root, "charts", "bloodraven", "crds"), filepath.Join(root, "test", "crds")}}
	// Four Services a group: envtest's default range (a /24) holds about 60
	// groups' worth, after which converging a group fails.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest with %s: %w", assets, err)
	}
	c := &Cluster{Config: cfg, env: env, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := c.setup(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) setup() error {
	user, err := c.env.AddUser(envtest.User{Name: "bench-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("operator user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	if c.Client, err = client.NewWithWatch(cfg, client.Options{Scheme: c.env.Scheme}); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// Stop tears the API server down.
func (c *Cluster) Stop() error { return c.env.Stop() }

// CreateNamespace makes a namespace.
func (c *Cluster) CreateNamespace(ctx context.Context, ns string) error {
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	return nil
}

// Accounts are the logins every group's credential Secrets hold; the
// stand-ins accept the operator's.
type Accounts struct{ Operator, Replication, Application, Monitor routing.Account }

// DefaultAccounts are the bench's logins.
var DefaultAccounts = Accounts{
	Operator:    routing.Account{Username: "bloodraven", Password: "operator-secret"},
	Replication: routing.Account{Username: "repl", Password: "repl-secret"},
	Application: routing.Account{Username: "app", Password: "app-secret"},
	Monitor:     routing.Account{Username: "monitor", Password: "monitor-secret"},
}

// CreateGroup creates one group with pollInterval poll, its credential
// Secrets (the operator keeps existing ones) and one Pod per site (no
// kubelet runs: the Pods are records only). The group is sent as
// unstructured JSON so the server applies the CRD's defaults.
func (c *Cluster) CreateGroup(ctx context.Context, ns, name, poll string, acc Accounts) error {
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for role, a := range map[string]routing.Account{routing.AccountOperator: acc.Operator,
		routing.AccountReplication: acc.Replication, routing.AccountApplication: acc.Application,
		routing.AccountMonitor: acc.Monitor} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: routing.CredentialSecretName(g, role), Namespace: ns},
			Data: map[string][]byte{routing.SecretKeyUsername: []byte(a.Username), routing.SecretKeyPassword: []byte(a.Password)}}
		if err := c.Client.Create(ctx, sec); err != nil {
			return fmt.Errorf("group %s secret %s: %w", name, role, err)
		}
	}
	var sites []any
	for _, s := range Sites {
		sites = append(sites, map[string]any{"name": s, "zone": "zone-" + s})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"sites": sites, "mysql": map[string]any{"flavor": string(v1alpha1.FlavorMariaDB)},
			"pollInterval": poll, "dns": map[string]any{"hostname": name + ".db.example.com", "ttl": 30}}}}
	if err := c.Client.Create(ctx, u); err != nil {
		return fmt.Errorf("group %s: %w", name, err)
	}
	for _, s := range Sites {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: routing.SiteName(name, s) + "-0", Namespace: ns,
			Labels: map[string]string{v1alpha1.LabelGroup: name, v1alpha1.LabelSite: s, v1alpha1.LabelRole: v1alpha1.RoleReplica}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysqld", Image: "mariadb:10.11"}}}}
		if err := c.Client.Create(ctx, pod); err != nil {
			return fmt.Errorf("group %s pod: %w", name, err)
		}
	}
	return nil
}
