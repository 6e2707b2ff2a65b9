package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

// Group is a MysqlFailoverGroup to create. Each site is placed on the node
// of the same name (topology.kubernetes.io/zone=<site>).
type Group struct {
	Namespace string
	Name      string
	Sites     []string // in priority order: the first becomes active
	Hostname  string   // dns.hostname; empty publishes no DNS name
	// Spec holds extra lines of the spec (timings, mysql flavor), indented by
	// two spaces, e.g. "  pollInterval: 1s\n".
	Spec string
}

// Manifest is the group's YAML.
func (g Group) Manifest() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: MysqlFailoverGroup\n", v1alpha1.GroupVersion)
	fmt.Fprintf(&b, "metadata: {name: %s, namespace: %s}\nspec:\n  sites:\n", g.Name, g.Namespace)
	for _, s := range g.Sites {
		fmt.Fprintf(&b, "  - {name: %s, zone: %s}\n", s, s)
	}
	if g.Hostname != "" {
		fmt.Fprintf(&b, "  dns: {hostname: %s, ttl: 5}\n", g.Hostname)
	}
	return b.String() + g.Spec
}

// Create makes the group's namespace when missing and applies the group.
func Create(ctx context.Context, c *localcluster.Cluster, g Group) error {
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, g.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := c.Kubectl(ctx, "create", "namespace", g.Namespace); err != nil {
			return err
		}
	}
	return Apply(ctx, c, g.Manifest())
}

// Apply applies a manifest with kubectl.
func Apply(ctx context.Context, c *localcluster.Cluster, yaml string) error {
	f, err := os.CreateTemp("", "bloodraven-manifest-*.yaml")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(yaml); err != nil {
		return errors.Join(fmt.Errorf("manifest: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	_, err = c.Kubectl(ctx, "apply", "-f", f.Name())
	return err
}

var groupResource = v1alpha1.GroupVersion.WithResource("mysqlfailovergroups")

// Get reads a group.
func Get(ctx context.Context, c *localcluster.Cluster, ns, name string) (*v1alpha1.MysqlFailoverGroup, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	u, err := dyn.Resource(groupResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get group %s/%s: %w", ns, name, err)
	}
	var mg v1alpha1.MysqlFailoverGroup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &mg); err != nil {
		return nil, fmt.Errorf("decode group: %w", err)
	}
	return &mg, nil
}

// Ready says whether the group is Ready with site active at generation gen
// (any generation when gen is 0).
func Ready(mg *v1alpha1.MysqlFailoverGroup, site string, gen int64) error {
	st := mg.Status
	if st.ActiveSite != site || (gen != 0 && st.TopologyGeneration != gen) || !condition(mg, "Ready") {
		return fmt.Errorf("active %q generation %d ready %v, want %s at %d",
			st.ActiveSite, st.TopologyGeneration, condition(mg, "Ready"), site, gen)
	}
	return nil
}

// Healthy says whether the group is Ready on site, not Degraded, the site
// writable and every other site read-only and replicating.
func Healthy(mg *v1alpha1.MysqlFailoverGroup, site string) error {
	if err := Ready(mg, site, 0); err != nil {
		return err
	}
	if condition(mg, "Degraded") {
		return errors.New("group is Degraded")
	}
	if len(mg.Status.Sites) != len(mg.Spec.Sites) {
		return fmt.Errorf("status lists %d of %d sites", len(mg.Status.Sites), len(mg.Spec.Sites))
	}
	for _, s := range mg.Status.Sites {
		switch {
		case s.Name == site && s.State != v1alpha1.StateWritable:
			return fmt.Errorf("%s is %s, not writable", s.Name, s.State)
		case s.Name != site && (s.State != v1alpha1.StateReadOnly || !s.Replicating):
			return fmt.Errorf("%s is %s, replicating %v", s.Name, s.State, s.Replicating)
		}
	}
	return nil
}

func condition(mg *v1alpha1.MysqlFailoverGroup, typ string) bool {
	for _, c := range mg.Status.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// Wait polls the group until cond holds, for at most within.
func Wait(ctx context.Context, c *localcluster.Cluster, ns, name string, within time.Duration,
	cond func(*v1alpha1.MysqlFailoverGroup) error) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return poll(ctx, "group "+ns+"/"+name, func() error {
		mg, err := Get(ctx, c, ns, name)
		if err != nil {
			return err
		}
		return cond(mg)
	})
}

// WaitDNS waits until host resolves, at the zone's DNS server, to exactly
// the ClusterIP of the group's Service for site.
func WaitDNS(ctx context.Context, c *localcluster.Cluster, ns, group, site, host string, within time.Duration) error {
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, routing.SiteName(group, site), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("service of %s: %w", site, err)
	}
	want := svc.Spec.ClusterIP
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return poll(ctx, "DNS "+host+" -> "+site, func() error {
		got, err := c.Dig(ctx, host, "A")
		if err != nil {
			return err
		}
		if strings.Join(got, ",") != want {
			return fmt.Errorf("dig %s = %v, want %s", host, got, want)
		}
		return nil
	})
}
