package plugin

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Config is what kubectl's global flags say about the cluster to talk to.
// Empty fields take kubectl's defaults: $KUBECONFIG or ~/.kube/config, its
// current context, and that context's namespace (else "default").
type Config struct {
	Kubeconfig string
	Context    string
	Namespace  string
}

// Connect builds a client for the MysqlFailoverGroup kind with kubectl's
// loading rules, and returns it with the namespace to work in.
func Connect(cfg Config) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = cfg.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}
	overrides.Context.Namespace = cfg.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rest, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig namespace: %w", err)
	}
	s, err := Scheme()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(rest, client.Options{Scheme: s})
	if err != nil {
		return nil, "", fmt.Errorf("client for %s: %w", rest.Host, err)
	}
	return c, ns, nil
}

// Scheme knows the MysqlFailoverGroup kind, and Secrets (the backup
// store's credentials).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	return s, nil
}
