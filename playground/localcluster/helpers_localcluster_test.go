//go:build localcluster

package localcluster_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/shipstream/bloodraven/playground/localcluster"
)

// apply creates objects from YAML documents (Deployment, Service,
// ConfigMap, Secret, PersistentVolumeClaim) in namespace ns.
func apply(t *testing.T, c *localcluster.Cluster, ns string, docs ...string) {
	t.Helper()
	ctx := context.Background()
	for _, doc := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("decode: %v", err)
		}
		var err error
		switch meta.Kind {
		case "Deployment":
			var o appsv1.Deployment
			mustDecode(t, doc, &o)
			_, err = c.Client.AppsV1().Deployments(ns).Create(ctx, &o, metav1.CreateOptions{})
		case "Service":
			var o corev1.Service
			mustDecode(t, doc, &o)
			_, err = c.Client.CoreV1().Services(ns).Create(ctx, &o, metav1.CreateOptions{})
		case "ConfigMap":
			var o corev1.ConfigMap
			mustDecode(t, doc, &o)
			_, err = c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &o, metav1.CreateOptions{})
		case "Secret":
			var o corev1.Secret
			mustDecode(t, doc, &o)
			_, err = c.Client.CoreV1().Secrets(ns).Create(ctx, &o, metav1.CreateOptions{})
		case "PersistentVolumeClaim":
			var o corev1.PersistentVolumeClaim
			mustDecode(t, doc, &o)
			_, err = c.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &o, metav1.CreateOptions{})
		default:
			t.Fatalf("apply: unsupported kind %q", meta.Kind)
		}
		if err != nil {
			t.Fatalf("create %s: %v", meta.Kind, err)
		}
	}
}

func mustDecode(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("decode %T: %v", into, err)
	}
}

func namespace(t *testing.T, c *localcluster.Cluster, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	return name
}

// eventually polls fn every 100 ms until it returns nil or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s: %v", what, limit, err)
}

// readyPod waits for one Ready Pod matching selector and returns it.
func readyPod(t *testing.T, c *localcluster.Cluster, ns, selector string, limit time.Duration) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	eventually(t, limit, "ready pod "+selector, func() error {
		pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && isReady(p) {
				found = p
				return nil
			}
		}
		return fmt.Errorf("%d pods, none ready: %s", len(pods.Items), podSummary(pods.Items))
	})
	return found
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podSummary(pods []corev1.Pod) string {
	s := ""
	for _, p := range pods {
		s += fmt.Sprintf("[%s %s", p.Name, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				s += fmt.Sprintf(" %s:%s(%s)", cs.Name, w.Reason, w.Message)
			}
		}
		s += "]"
	}
	return s
}

var registerOnce = map[*localcluster.Cluster]bool{}

// db opens MariaDB at addr through the cluster's network namespace.
func db(t *testing.T, c *localcluster.Cluster, addr, password string) *sql.DB {
	t.Helper()
	if !registerOnce[c] {
		mysql.RegisterDialContext("localcluster", func(ctx context.Context, addr string) (net.Conn, error) {
			return c.Dial(ctx, "tcp", addr)
		})
		registerOnce[c] = true
	}
	d, err := sql.Open("mysql", fmt.Sprintf("root:%s@localcluster(%s)/?timeout=2s&readTimeout=5s", password, addr))
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	d.SetMaxIdleConns(0)
	t.Cleanup(func() { d.Close() })
	return d
}

func intstrFromString(s string) intstr.IntOrString { return intstr.FromString(s) }
