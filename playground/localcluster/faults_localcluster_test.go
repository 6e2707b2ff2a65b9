//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

func echoDeployment(name, site string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {topology.kubernetes.io/zone: %[2]s}
      containers:
      - name: web
        image: http-echo
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1}
`, name, site)
}

// curlFrom fetches url from inside a Pod, the way its programs would.
func curlFrom(c *localcluster.Cluster, ns, pod, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := c.Kubectl(ctx, "-n", ns, "exec", pod, "--", "curl", "-sS", "-m", "1", url)
	if err != nil {
		return err
	}
	if !strings.Contains(string(out), "pod=") {
		return fmt.Errorf("unexpected answer %q", out)
	}
	return nil
}

// TestPartition: a partition between two sites blocks Pod-to-Pod traffic
// both ways and leaves other links alone; healing restores it.
func TestPartition(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	ns := namespace(t, c, "faults")
	apply(t, c, ns, echoDeployment("a", "site-a"), echoDeployment("b", "site-b"))
	a := readyPod(t, c, ns, "app=a", 30*time.Second)
	b := readyPod(t, c, ns, "app=b", 30*time.Second)
	urlB := "http://" + net.JoinHostPort(b.Status.PodIP, "8080") + "/"
	urlA := "http://" + net.JoinHostPort(a.Status.PodIP, "8080") + "/"
	eventually(t, 5*time.Second, "a reaches b", func() error { return curlFrom(c, ns, a.Name, urlB) })

	if err := c.Partition(ctx, "site-a", "site-b"); err != nil {
		t.Fatalf("partition: %v", err)
	}
	if err := curlFrom(c, ns, a.Name, urlB); err == nil {
		t.Fatal("site-a reached site-b through the partition")
	}
	if err := curlFrom(c, ns, b.Name, urlA); err == nil {
		t.Fatal("site-b reached site-a through the partition")
	}
	if _, err := c.DialFrom(dialCtx(), "site-a", "tcp", net.JoinHostPort(b.Status.PodIP, "8080")); err == nil {
		t.Fatal("DialFrom(site-a) reached site-b through the partition")
	}
	if _, err := c.HTTPGet(dialCtx(), net.JoinHostPort(b.Status.PodIP, "8080"), "/"); err != nil {
		t.Fatalf("clients lost site-b though they are not partitioned: %v", err)
	}
	st, err := c.Status(ctx)
	if err != nil || len(st.Partitions) != 1 {
		t.Fatalf("status partitions = %+v, %v", st, err)
	}
	if err := c.Heal(ctx, "site-b", "site-a"); err != nil {
		t.Fatalf("heal: %v", err)
	}
	eventually(t, 5*time.Second, "a reaches b after heal", func() error { return curlFrom(c, ns, a.Name, urlB) })
	eventually(t, 5*time.Second, "b reaches a after heal", func() error { return curlFrom(c, ns, b.Name, urlA) })
}

// TestFreezeAndNodeStop: a frozen container stops answering until thawed;
// a stopped node's Pods become unreachable and come back on start.
func TestFreezeAndNodeStop(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	const ns = "faults"
	b := readyPod(t, c, ns, "app=b", 30*time.Second)
	addr := net.JoinHostPort(b.Status.PodIP, "8080")
	if err := c.Freeze(ctx, ns, b.Name, "web"); err != nil {
		t.Fatalf("freeze: %v", err)
	}
	if _, err := c.HTTPGet(dialCtx(), addr, "/"); err == nil {
		t.Fatal("a frozen container answered")
	}
	if err := c.Thaw(ctx, ns, b.Name, "web"); err != nil {
		t.Fatalf("thaw: %v", err)
	}
	eventually(t, 5*time.Second, "thawed container answers", func() error { _, err := c.HTTPGet(dialCtx(), addr, "/"); return err })

	if err := c.StopNode(ctx, "site-b"); err != nil {
		t.Fatalf("node-stop: %v", err)
	}
	if _, err := c.HTTPGet(dialCtx(), addr, "/"); err == nil {
		t.Fatal("a pod of a stopped node answered")
	}
	start := time.Now()
	if err := c.StartNode(ctx, "site-b"); err != nil {
		t.Fatalf("node-start: %v", err)
	}
	eventually(t, 30*time.Second, "pod back after node-start", func() error {
		p := readyPod(t, c, ns, "app=b", 30*time.Second)
		_, err := c.HTTPGet(dialCtx(), net.JoinHostPort(p.Status.PodIP, "8080"), "/")
		return err
	})
	t.Logf("site-b pod answering %.1fs after node-start", time.Since(start).Seconds())
}

func dialCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = cancel // released by the timeout
	return ctx
}
