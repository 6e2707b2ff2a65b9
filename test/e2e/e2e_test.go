//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
const group = `apiVersion: bloodraven.shipstream.io/v1alpha1
kind: MysqlFailoverGroup
metadata: {name: orders, namespace: shop}
spec:
  sites:
  - {name: site-a, zone: site-a}
  - {name: site-b, zone: site-b}
  pollInterval: 1s
  failureThreshold: 2
  failoverCooldown: 1m
  sidecar: {leaseTimeout: 6s, peerCheckInterval: 2s}
  mysql: {storage: {size: 1Gi}}
  dns: {hostname: db.bloodraven.test, ttl: 5}
`

// A group of two sites comes up healthy with real Pods; killing the primary's
// mysqld moves the -primary EndpointSlice and the DNS answer to the other site.
func TestPrimaryMysqldKilled(t *testing.T) {
	root := repoRoot(t)
	c := up(t, root)
	ctx := t.Context()
	installOperator(t, c, root)
	kubectl(t, c, "create", "namespace", ns)
	apply(t, c, group)

	podA, ipA := sitePod(t, c, "site-a", 90*time.Second)
	_, ipB := sitePod(t, c, "site-b", 30*time.Second)
	svcA, svcB := clusterIP(t, c, "orders-site-a"), clusterIP(t, c, "orders-site-b")
	eventually(t, 90*time.Second, "group Ready on site-a", func() error { return ready(c, "site-a", 1) })
	eventually(t, 20*time.Second, "orders-primary -> site-a", func() error { return primaryEndpoints(c, ipA) })
	eventually(t, 20*time.Second, "DNS -> site-a", func() error { return dig(c, svcA) })

	start := time.Now()
	if err := c.Kill(ctx, ns, podA, "mysqld"); err != nil {
		t.Fatalf("kill mysqld: %v", err)
	}
	eventually(t, 30*time.Second, "failover to site-b", func() error { return ready(c, "site-b", 2) })
	t.Logf("group Ready on site-b at generation 2 %.1fs after the kill", time.Since(start).Seconds())
	if os.Getenv("E2E_OPERATOR_LOG") != "" {
		out, _ := c.Kubectl(ctx, "-n", "bloodraven-system", "logs", "deploy/bloodraven")
		t.Logf("operator log:\n%s", out)
	}
	eventually(t, 15*time.Second, "orders-primary -> site-b", func() error { return primaryEndpoints(c, ipB) })
	t.Logf("orders-primary points at site-b %.1fs after the kill", time.Since(start).Seconds())
	eventually(t, 15*time.Second, "DNS -> site-b", func() error { return dig(c, svcB) })
	t.Logf("DNS answers site-b %.1fs after the kill", time.Since(start).Seconds())
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"operator", "sidecar"} {
		if _, err := os.Stat(filepath.Join(root, "bin", bin)); err != nil {
			t.Fatalf("bin/%s missing: run 'make build' (make test-e2e does)", bin)
		}
	}
	return root
}

// up starts the local cluster with the real kubelet's first restart delay
// (10 s), so that a killed mysqld stays down for longer than detection.
func up(t *testing.T, root string) *localcluster.Cluster {
	t.Helper()
	crds, err := filepath.Glob(filepath.Join(root, "charts", "bloodraven", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("CRDs: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c, err := localcluster.Up(ctx, localcluster.Options{RepoRoot: root, Sites: []string{"site-a", "site-b"}, CRDs: crds,
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

// installOperator renders the Helm chart and applies it.
func installOperator(t *testing.T, c *localcluster.Cluster, root string) {
	t.Helper()
	helm := filepath.Join(cacheDir(), "bin", "helm")
	out, err := exec.CommandContext(t.Context(), helm, "template", "bloodraven", filepath.Join(root, "charts", "bloodraven"),
		"--namespace", "bloodraven-system").Output()
	if err != nil {
		t.Fatalf("helm template (run 'make deps' for %s): %v", helm, err)
	}
	kubectl(t, c, "create", "namespace", "bloodraven-system")
	apply(t, c, string(out))
}

func cacheDir() string {
	if d := os.Getenv("BLOODRAVEN_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.Getenv("HOME"), ".cache", "bloodraven")
	}
	return filepath.Join(base, "bloodraven")
}

func kubectl(t *testing.T, c *localcluster.Cluster, args ...string) []byte {
	t.Helper()
	out, err := c.Kubectl(t.Context(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func apply(t *testing.T, c *localcluster.Cluster, yaml string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, "apply", "-f", f)
}

// sitePod waits for the site's Pod to run and returns its name and IP.
func sitePod(t *testing.T, c *localcluster.Cluster, site string, within time.Duration) (string, string) {
	t.Helper()
	var name, ip string
	eventually(t, within, site+" Pod running", func() error {
		out, err := c.Kubectl(context.Background(), "-n", ns, "get", "pods", "-l", "bloodraven.shipstream.io/site="+site,
			"-o", "jsonpath={.items[0].metadata.name} {.items[0].status.podIP} {.items[0].status.phase}")
		f := strings.Fields(string(out))
		if err != nil || len(f) != 3 || f[2] != "Running" {
			return fmt.Errorf("pod: %q %v", out, err)
		}
		name, ip = f[0], f[1]
		return nil
	})
	return name, ip
}

func clusterIP(t *testing.T, c *localcluster.Cluster, svc string) string {
	t.Helper()
	return strings.TrimSpace(string(kubectl(t, c, "-n", ns, "get", "service", svc, "-o", "jsonpath={.spec.clusterIP}")))
}

// ready checks that the group is Ready with active on the generation.
func ready(c *localcluster.Cluster, active string, generation int64) error {
	out, err := c.Kubectl(context.Background(), "-n", ns, "get", "mysqlfailovergroup", "orders", "-o", "json")
	if err != nil {
		return err
	}
	var g struct {
		Status struct {
			ActiveSite         string `json:"activeSite"`
			TopologyGeneration int64  `json:"topologyGeneration"`
			Conditions         []struct{ Type, Status, Reason string }
		}
	}
	if err := json.Unmarshal(out, &g); err != nil {
		return err
	}
	st := g.Status
	for _, cond := range st.Conditions {
		if cond.Type == "Ready" && cond.Status == "True" && st.ActiveSite == active && st.TopologyGeneration == generation {
			return nil
		}
	}
	return fmt.Errorf("status %+v", st)
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

func dig(c *localcluster.Cluster, want string) error {
	got, err := c.Dig(context.Background(), hostname, "A")
	if err != nil {
		return err
	}
	if strings.Join(got, ",") != want {
		return fmt.Errorf("dig %s = %v, want %s", hostname, got, want)
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
