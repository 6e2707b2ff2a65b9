//go:build envtest

package routing_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// cp is the package's one control plane.
var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

const operatorURL = "http://bloodraven.bloodraven-system.svc:8081"

func newRouter() *routing.Router {
	return routing.New(cp.Client, cp.Scheme, routing.Options{OperatorURL: operatorURL})
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var nsSeq atomic.Int32

// newNamespace makes a namespace of its own for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("routing-%d", nsSeq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cp.Client.Create(testContext(t), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return name
}

// site is a spec.sites entry.
type site struct {
	name, zone, role, lbIP string
	nodeSelector, taint    map[string]string
}

func (s site) spec() map[string]any {
	m := map[string]any{"name": s.name}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("zone", s.zone)
	set("role", s.role)
	set("loadBalancerIP", s.lbIP)
	if s.nodeSelector != nil {
		m["nodeSelector"] = toAny(s.nodeSelector)
	}
	if s.taint != nil {
		m["taintNodeSelector"] = toAny(s.taint)
	}
	return m
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// createGroup creates a group through the API, so the CRD's defaults apply,
// and reads it back. extra is merged into spec.
func createGroup(t *testing.T, ns, name string, sites []site, extra map[string]any) *v1alpha1.MysqlFailoverGroup {
	t.Helper()
	ctx := testContext(t)
	var list []any
	for _, s := range sites {
		list = append(list, s.spec())
	}
	spec := map[string]any{"sites": list}
	for k, v := range extra {
		spec[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "MysqlFailoverGroup",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}}
	if err := cp.Client.Create(ctx, u); err != nil {
		t.Fatalf("create group: %v", err)
	}
	var g v1alpha1.MysqlFailoverGroup
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &g); err != nil {
		t.Fatalf("get group: %v", err)
	}
	return &g
}

func converge(t *testing.T, r *routing.Router, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	if err := r.Converge(testContext(t), g); err != nil {
		t.Fatalf("converge: %v", err)
	}
}

func get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := cp.Client.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("get %T %s: %v", obj, name, err)
	}
}

// checkOwned fails unless obj's controller is g.
func checkOwned(t *testing.T, obj client.Object, g *v1alpha1.MysqlFailoverGroup) {
	t.Helper()
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID != g.UID || ref.Kind != "MysqlFailoverGroup" {
		t.Errorf("%T %s: controller %+v, want group %s", obj, obj.GetName(), ref, g.Name)
	}
}
