//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

const dbPassword = "s3cret"

const dbClaim = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// A MariaDB container (data on a PVC) next to a small HTTP server, as the
// operator will run mysqld next to its sidecar.
const dbDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: db}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 5
      nodeSelector: {topology.kubernetes.io/zone: site-a}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
      containers:
      - name: mariadb
        image: docker.io/library/mariadb:11.4
        args: ["--innodb-buffer-pool-size=16M", "--skip-name-resolve"]
        env:
        - {name: MARIADB_ROOT_PASSWORD, value: s3cret}
        - name: MY_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        ports: [{name: mysql, containerPort: 3306}]
        volumeMounts: [{name: data, mountPath: /var/lib/mysql}]
        readinessProbe: {tcpSocket: {port: mysql}, periodSeconds: 1}
        livenessProbe:
          exec: {command: [mariadb-admin, --user=root, --password=s3cret, ping]}
          periodSeconds: 2
          failureThreshold: 5
      - name: web
        image: http-echo
        args: ["--listen=:8080"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 1}
`

const dbService = `
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  selector: {app: db}
  ports:
  - {name: mysql, port: 3306, targetPort: mysql}
  - {name: http, port: 80, targetPort: http}
`

// TestPodsAndServices: the Deployment becomes Ready, its Service's
// EndpointSlice lists the Pod IP, and clients reach it through the Pod IP
// and the ClusterIP.
func TestPodsAndServices(t *testing.T) {
	c := cluster(t)
	ns := namespace(t, c, "pods")
	start := time.Now()
	apply(t, c, ns, dbClaim, dbDeployment, dbService)
	pod := readyPod(t, c, ns, "app=db", 60*time.Second)
	t.Logf("pod %s ready with IP %s after %.1fs", pod.Name, pod.Status.PodIP, time.Since(start).Seconds())
	if node := pod.Spec.NodeName; node != "site-a" {
		t.Errorf("pod on node %q, want site-a", node)
	}
	ctx := context.Background()
	eventually(t, 10*time.Second, "endpointslice lists the pod IP", func() error {
		slices, err := c.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=db"})
		if err != nil {
			return err
		}
		for _, s := range slices.Items {
			for _, ep := range s.Endpoints {
				for _, a := range ep.Addresses {
					if a == pod.Status.PodIP {
						return nil
					}
				}
			}
		}
		return fmt.Errorf("pod IP %s not in %d slices", pod.Status.PodIP, len(slices.Items))
	})
	checkDB(t, c, net.JoinHostPort(pod.Status.PodIP, "3306"))
	body, err := c.HTTPGet(dialCtx(), net.JoinHostPort(pod.Status.PodIP, "8080"), "/hello")
	if err != nil || !strings.Contains(body, "pod="+pod.Name) || !strings.Contains(body, "ip="+pod.Status.PodIP) {
		t.Fatalf("http via pod IP: %q, %v", body, err)
	}
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "http via ClusterIP", func() error {
		_, err := c.HTTPGet(dialCtx(), net.JoinHostPort(svc.Spec.ClusterIP, "80"), "/")
		return err
	})
	checkDB(t, c, net.JoinHostPort(svc.Spec.ClusterIP, "3306"))
	checkEnv(t, c, ns, pod.Name)
}

func checkDB(t *testing.T, c *localcluster.Cluster, addr string) {
	t.Helper()
	d := db(t, c, addr, dbPassword)
	var v string
	eventually(t, 10*time.Second, "SELECT @@version at "+addr, func() error {
		return d.QueryRow("SELECT @@version").Scan(&v)
	})
	t.Logf("%s answers: MariaDB %s", addr, v)
}

// checkEnv: the container got its downward-API variables and status fieldRefs.
func checkEnv(t *testing.T, c *localcluster.Cluster, ns, pod string) {
	t.Helper()
	out, err := c.Kubectl(context.Background(), "-n", ns, "exec", pod, "-c", "mariadb", "--", "env")
	if err != nil {
		t.Fatalf("kubectl exec: %v", err)
	}
	p, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"POD_IP=" + p.Status.PodIP, "MY_IP=" + p.Status.PodIP, "POD_NAME=" + pod, "POD_NAMESPACE=" + ns} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("container env lacks %s:\n%s", want, out)
		}
	}
}
