//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/playground/install"
	"github.com/shipstream/bloodraven/playground/localcluster"
)

func TestMain(m *testing.M) {
	localcluster.Init()
	os.Exit(m.Run())
}

const (
	ns       = "shop"
	hostname = "db.bloodraven.test"
)

// group is a two-site group with short timings.
var group = install.Group{Namespace: ns, Name: "orders", Sites: []string{"site-a", "site-b"}, Hostname: hostname,
	Spec: `  pollInterval: 1s
  failureThreshold: 2
  failoverCooldown: 1m
  sidecar: {leaseTimeout: 6s, peerCheckInterval: 2s}
  mysql: {storage: {size: 1Gi}}
`}

// A group of two sites comes up healthy with real Pods; killing the primary's
// mysqld moves the -primary EndpointSlice and the DNS answer to the other
// site. The sidecar reports the dead mysqld to the operator through the
// chart's Service, so the failover does not wait for mysqld to restart.
func TestPrimaryMysqldKilled(t *testing.T) {
	root, err := install.RepoRoot()
	if err == nil {
		err = install.CheckBinaries(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := up(t, root)
	ctx := t.Context()
	start := time.Now()
	if err := install.Install(ctx, c, install.Chart{Root: root}); err != nil {
		t.Fatalf("install the chart: %v", err)
	}
	t.Logf("operator Ready behind its Service %.1fs after helm install", time.Since(start).Seconds())
	if err := install.Create(ctx, c, group); err != nil {
		t.Fatal(err)
	}
	podA, ipA := sitePod(t, c, "site-a", 90*time.Second)
	_, ipB := sitePod(t, c, "site-b", 30*time.Second)
	waitGroup(t, c, 90*time.Second, "healthy on site-a", func(mg *v1alpha1.MysqlFailoverGroup) error {
		return install.Healthy(mg, "site-a")
	})
	eventually(t, 20*time.Second, "orders-primary -> site-a", func() error { return primaryEndpoints(c, ipA) })
	if err := install.WaitDNS(ctx, c, ns, group.Name, "site-a", hostname, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	if err := c.Kill(ctx, ns, podA, "mysqld"); err != nil {
		t.Fatalf("kill mysqld: %v", err)
	}
	waitGroup(t, c, 30*time.Second, "failover to site-b", func(mg *v1alpha1.MysqlFailoverGroup) error {
		return install.Ready(mg, "site-b", 2)
	})
	took := time.Since(start)
	t.Logf("group Ready on site-b at generation 2 %.1fs after the kill", took.Seconds())
	if n := restarts(t, c, podA, "mysqld"); n != 0 {
		t.Errorf("the failover took %.1fs and waited for mysqld's restart (restarts %d): the sidecar's report did not count", took.Seconds(), n)
	}
	if os.Getenv("E2E_OPERATOR_LOG") != "" {
		out, _ := c.Kubectl(ctx, "-n", "bloodraven-system", "logs", "deploy/bloodraven")
		t.Logf("operator log:\n%s", out)
	}
	eventually(t, 15*time.Second, "orders-primary -> site-b", func() error { return primaryEndpoints(c, ipB) })
	t.Logf("orders-primary points at site-b %.1fs after the kill", time.Since(start).Seconds())
	if err := install.WaitDNS(ctx, c, ns, group.Name, "site-b", hostname, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("DNS answers site-b %.1fs after the kill", time.Since(start).Seconds())
}

// up starts the local cluster with the real kubelet's first restart delay
// (10 s), so that a killed mysqld stays down for longer than detection.
func up(t *testing.T, root string) *localcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c, err := localcluster.Up(ctx, localcluster.Options{RepoRoot: root, Sites: group.Sites,
		BackoffInitial: 10 * time.Second, BackoffMax: 10 * time.Second, Progress: logWriter{t}})
	if err != nil {
		t.Fatalf("localcluster.Up: %v", err)
	}
	t.Cleanup(func() {
		if d, err := time.ParseDuration(os.Getenv("E2E_HOLD")); err == nil {
			t.Logf("holding the cluster for %s: KUBECONFIG=%s", d, c.Kubeconfig())
			time.Sleep(d)
		}
		if t.Failed() {
			out, _ := c.Kubectl(context.Background(), "-n", "bloodraven-system", "logs", "deploy/bloodraven", "--tail=40")
			t.Logf("operator log:\n%s", out)
		}
		if err := c.Down(); err != nil {
			t.Errorf("localcluster.Down: %v", err)
		}
	})
	return c
}

func waitGroup(t *testing.T, c *localcluster.Cluster, within time.Duration, what string, cond func(*v1alpha1.MysqlFailoverGroup) error) {
	t.Helper()
	if err := install.Wait(t.Context(), c, ns, group.Name, within, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// sitePod waits for the site's Pod to run and returns its name and IP.
func sitePod(t *testing.T, c *localcluster.Cluster, site string, within time.Duration) (string, string) {
	t.Helper()
	var name, ip string
	eventually(t, within, site+" Pod running", func() error {
		pods, err := c.Client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1alpha1.LabelSite + "=" + site})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == "Running" && p.Status.PodIP != "" {
				name, ip = p.Name, p.Status.PodIP
				return nil
			}
		}
		return fmt.Errorf("no running pod of %s among %d", site, len(pods.Items))
	})
	return name, ip
}

// restarts is a container's restart count.
func restarts(t *testing.T, c *localcluster.Cluster, pod, container string) int32 {
	t.Helper()
	p, err := c.Client.CoreV1().Pods(ns).Get(t.Context(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	t.Fatalf("pod %s has no container %s", pod, container)
	return 0
}

func primaryEndpoints(c *localcluster.Cluster, want string) error {
	out, err := c.Kubectl(context.Background(), "-n", ns, "get", "endpointslices", "-l",
		"kubernetes.io/service-name=orders-primary", "-o", "jsonpath={.items[*].endpoints[*].addresses[*]}")
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("orders-primary endpoints %q, want %q", got, want)
	}
	return nil
}

func eventually(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
