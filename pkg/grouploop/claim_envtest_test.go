//go:build envtest

package grouploop

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/failover"
)

// cp is the package's one control plane (envtest only).
var cp *testbed.ControlPlane

func TestMain(m *testing.M) { os.Exit(testbed.MainWithControlPlane(m, &cp)) }

var nsCounter atomic.Int32

// claimWorld is a namespace of its own holding one group, orders, with
// sites a and b, on the real API server.
type claimWorld struct {
	t  *testing.T
	ns string
}

func newClaimWorld(t *testing.T) *claimWorld {
	t.Helper()
	e := &claimWorld{t: t, ns: fmt.Sprintf("grouploop-%d-%d", os.Getpid()%1000, nsCounter.Add(1))}
	if err := cp.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	// Unstructured, so that the server applies the CRD's defaults.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": "orders", "namespace": e.ns},
		"spec": map[string]any{
			"sites": []any{map[string]any{"name": "a", "zone": "zone-a"}, map[string]any{"name": "b", "zone": "zone-b"}},
			"mysql": map[string]any{"flavor": string(v1alpha1.FlavorMariaDB)},
			"dns":   map[string]any{"hostname": "orders.db.example.com", "ttl": 30},
		}}}
	if err := cp.Client.Create(t.Context(), u); err != nil {
		t.Fatalf("create group: %v", err)
	}
	return e
}

func (e *claimWorld) get() *v1alpha1.MysqlFailoverGroup {
	e.t.Helper()
	g := &v1alpha1.MysqlFailoverGroup{}
	if err := cp.Client.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: "orders"}, g); err != nil {
		e.t.Fatalf("get group: %v", err)
	}
	return g
}

// passPersister is the poll loop's status patcher for a pass that read g.
func passPersister(g *v1alpha1.MysqlFailoverGroup) failover.Persister {
	p := &statusPatcher{c: cp.Client, reader: cp.Client}
	p.reset(g)
	return p
}

// TestClaimConflictsOnTheAPIServer: the claim's optimistic lock holds on a
// real API server, also when the claim changes nothing (the site was marked
// already): the patch then carries only the resourceVersion, and it must
// still conflict with a newer object rather than pass as a no-op.
func TestClaimConflictsOnTheAPIServer(t *testing.T) {
	e := newClaimWorld(t)
	for _, marked := range []bool{false, true} {
		t.Run(fmt.Sprintf("already marked %v", marked), func(t *testing.T) {
			g := e.get()
			failover.SiteRecord(&g.Status, "a").MaybeWritable = marked
			if err := cp.Client.Status().Update(t.Context(), g); err != nil {
				t.Fatal(err)
			}
			stale := e.get()
			p := passPersister(stale)
			other := e.get()
			other.Status.ObservedGeneration += 1000
			if err := cp.Client.Status().Update(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			_, err := failover.Claim(t.Context(), p, stale, "a")
			if !errors.Is(err, failover.ErrClaim) || !errors.Is(err, ErrAuthorityMoved) {
				t.Fatalf("want ErrClaim and ErrAuthorityMoved, got %v", err)
			}
			if got := e.get(); got.ResourceVersion != other.ResourceVersion ||
				failover.MaybeWritable(&got.Status, "a") != marked {
				t.Fatalf("the refused claim wrote: %s -> %s, %+v", other.ResourceVersion, got.ResourceVersion, got.Status.Sites)
			}
			// On the fresh object the same claim lands.
			fresh := e.get()
			if _, err := failover.Claim(t.Context(), passPersister(fresh), fresh, "a"); err != nil {
				t.Fatalf("claim on a fresh read: %v", err)
			}
			if !failover.MaybeWritable(&e.get().Status, "a") {
				t.Fatal("the claim on a fresh read was not written")
			}
		})
	}
}
