//go:build localcluster

package localcluster_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

// TestPersistenceAndRestarts: data written through the Service survives the
// Pod's deletion (the replacement mounts the same claim), and a killed
// container restarts with its restart count raised.
func TestPersistenceAndRestarts(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	const ns = "pods" // reuses TestPodsAndServices' Deployment
	pod := readyPod(t, c, ns, "app=db", 60*time.Second)
	d := db(t, c, net.JoinHostPort(pod.Status.PodIP, "3306"), dbPassword)
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS keep",
		"CREATE TABLE IF NOT EXISTS keep.t (v VARCHAR(20))",
		"INSERT INTO keep.t VALUES ('survives')",
	} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	start := time.Now()
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	var next = pod
	eventually(t, 60*time.Second, "replacement pod ready", func() error {
		next = readyPod(t, c, ns, "app=db", 60*time.Second)
		if next.Name == pod.Name {
			return errSame
		}
		return nil
	})
	t.Logf("replacement %s (%s) ready %.1fs after delete", next.Name, next.Status.PodIP, time.Since(start).Seconds())
	d2 := db(t, c, net.JoinHostPort(next.Status.PodIP, "3306"), dbPassword)
	var v string
	eventually(t, 10*time.Second, "row read back", func() error {
		return d2.QueryRow("SELECT v FROM keep.t").Scan(&v)
	})
	if v != "survives" {
		t.Fatalf("read %q, want survives", v)
	}

	before := restarts(t, c, ns, next.Name, "web")
	start = time.Now()
	if err := c.Kill(ctx, ns, next.Name, "web"); err != nil {
		t.Fatalf("kill: %v", err)
	}
	eventually(t, 20*time.Second, "web restarted and ready", func() error {
		if restarts(t, c, ns, next.Name, "web") <= before {
			return errNotYet
		}
		_, err := c.HTTPGet(dialCtx(), net.JoinHostPort(next.Status.PodIP, "8080"), "/")
		return err
	})
	t.Logf("killed container back after %.1fs", time.Since(start).Seconds())
}

var (
	errSame   = errors.New("still the old pod")
	errNotYet = errors.New("not yet")
)

func restarts(t *testing.T, c *localcluster.Cluster, ns, pod, container string) int32 {
	t.Helper()
	p, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	t.Fatalf("pod %s has no container %s", pod, container)
	return 0
}

// TestLivenessRestarts: a failing liveness probe restarts the container,
// with backoff, and the status shows it.
func TestLivenessRestarts(t *testing.T) {
	c := cluster(t)
	ns := namespace(t, c, "liveness")
	apply(t, c, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: sick}
spec:
  replicas: 1
  selector: {matchLabels: {app: sick}}
  template:
    metadata: {labels: {app: sick}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: http-echo
        ports: [{name: http, containerPort: 8080}]
        livenessProbe: {httpGet: {path: /status/500, port: http}, periodSeconds: 1, failureThreshold: 1}
`)
	eventually(t, 20*time.Second, "two liveness restarts", func() error {
		pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
			return fmt.Errorf("pods: %v", err)
		}
		cs := pods.Items[0].Status.ContainerStatuses[0]
		if cs.RestartCount < 2 || cs.LastTerminationState.Terminated == nil {
			return fmt.Errorf("restarts %d, last state %+v", cs.RestartCount, cs.LastTerminationState)
		}
		return nil
	})
}
