//go:build localcluster

package localcluster_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Pod shaped like the chart's operator: no node selector or zone, resource
// requests and limits (QoS Burstable), and $(VAR) references in its args and
// env, as the operator's sidecar has in its --mysql-dsn.
const burstablePod = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: burst}
spec:
  replicas: 1
  selector: {matchLabels: {app: burst}}
  template:
    metadata: {labels: {app: burst}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: http-echo
        args: ["--listen=:$(LISTEN_PORT)"]
        env:
        - {name: LISTEN_PORT, value: "8081"}
        - {name: GREETING, value: "port $(LISTEN_PORT), literal $$(LISTEN_PORT), unknown $(NOPE)"}
        ports: [{name: http, containerPort: 8081}]
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1}
        resources:
          requests: {cpu: 50m, memory: 64Mi}
          limits: {memory: 256Mi}
`

const burstableService = `
apiVersion: v1
kind: Service
metadata: {name: burst}
spec:
  selector: {app: burst}
  ports: [{name: http, port: 80, targetPort: http}]
`

// TestBurstablePodWithExpansion: a Pod with resources gets an IP, Running and
// Ready status and an endpoint (its status updates must keep the QoS class
// the API server chose), and $(VAR) expands in its args and env.
func TestBurstablePodWithExpansion(t *testing.T) {
	c := cluster(t)
	ns := namespace(t, c, "burst")
	apply(t, c, ns, burstablePod, burstableService)
	pod := readyPod(t, c, ns, "app=burst", 30*time.Second)
	if pod.Status.PodIP == "" || pod.Status.Phase != corev1.PodRunning || pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Fatalf("pod status: ip %q phase %s qos %s", pod.Status.PodIP, pod.Status.Phase, pod.Status.QOSClass)
	}
	ctx := context.Background()
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, "burst", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "http via ClusterIP to the expanded port", func() error {
		_, err := c.HTTPGet(dialCtx(), net.JoinHostPort(svc.Spec.ClusterIP, "80"), "/")
		return err
	})
	out, err := c.Kubectl(ctx, "-n", ns, "exec", pod.Name, "--", "env")
	if err != nil {
		t.Fatalf("kubectl exec: %v", err)
	}
	if want := "GREETING=port 8081, literal $(LISTEN_PORT), unknown $(NOPE)\n"; !strings.Contains(string(out), want) {
		t.Errorf("env lacks %q:\n%s", want, out)
	}
}
