//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const volumesPod = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: vols}
spec:
  replicas: 1
  selector: {matchLabels: {app: vols}}
  template:
    metadata: {labels: {app: vols}}
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
      - {name: config, configMap: {name: greeting}}
      - {name: secret, secret: {secretName: token, defaultMode: 0400}}
      - {name: shared, emptyDir: {}}
      initContainers:
      - name: init
        image: busybox
        command: [sh, -c, 'cat /etc/greeting/text /etc/token/value > /shared/combined']
        volumeMounts:
        - {name: config, mountPath: /etc/greeting}
        - {name: secret, mountPath: /etc/token, readOnly: true}
        - {name: shared, mountPath: /shared}
      containers:
      - name: web
        image: http-echo
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {exec: {command: [test, -s, /data/combined]}, periodSeconds: 1}
        volumeMounts:
        - {name: shared, mountPath: /data}
        - {name: config, mountPath: /etc/app/text, subPath: text}
`

// TestVolumes: ConfigMap, Secret and emptyDir volumes appear at their mount
// paths (subPath too), an init container runs first, and an exec readiness
// probe sees what the container sees.
func TestVolumes(t *testing.T) {
	c := cluster(t)
	ns := namespace(t, c, "volumes")
	apply(t, c, ns,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting}\ndata: {text: \"hello \"}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {value: s3cret}\n",
		volumesPod)
	pod := readyPod(t, c, ns, "app=vols", 30*time.Second)
	ctx := context.Background()
	for path, want := range map[string]string{"/data/combined": "hello s3cret", "/etc/app/text": "hello ", "/etc/token/value": ""} {
		out, err := c.Kubectl(ctx, "-n", ns, "exec", pod.Name, "-c", "web", "--", "cat", path)
		if path == "/etc/token/value" {
			if err == nil {
				t.Errorf("web can read %s, which only the init container mounts", path)
			}
			continue
		}
		if err != nil || string(out) != want {
			t.Errorf("cat %s = %q, %v; want %q", path, out, err, want)
		}
	}
}

// TestServiceFollowsLabels: moving a role label moves a Service's traffic,
// as the operator's -primary Service will.
func TestServiceFollowsLabels(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	const ns = "faults" // pods a (site-a) and b (site-b) from TestPartition
	a := readyPod(t, c, ns, "app=a", 30*time.Second)
	b := readyPod(t, c, ns, "app=b", 30*time.Second)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "primary"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"role": "primary"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstrFromString("http")}}},
	}
	svc, err := c.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, "80")
	for _, p := range []*corev1.Pod{a, b, a} {
		for _, other := range []*corev1.Pod{a, b} {
			role := `null`
			if other == p {
				role = `"primary"`
			}
			patch := fmt.Sprintf(`{"metadata":{"labels":{"role":%s}}}`, role)
			if _, err := c.Client.CoreV1().Pods(ns).Patch(ctx, other.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		eventually(t, 3*time.Second, "primary Service reaches "+p.Name, func() error {
			body, err := c.HTTPGet(dialCtx(), addr, "/")
			if err != nil {
				return err
			}
			if !strings.Contains(body, "pod="+p.Name) {
				return fmt.Errorf("answered by %q", body)
			}
			return nil
		})
		t.Logf("primary Service moved to %s in %.2fs", p.Name, time.Since(start).Seconds())
	}
}
