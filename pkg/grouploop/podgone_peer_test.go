package grouploop

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestPeerPodGoneWaitsForTheKubelet: three sites; a (the old primary) is
// failing, b is active at generation 4, and c's Pod on node n1 is
// force-deleted without c's sidecar having reported generation 4. A Pod
// gone from the API is not a process gone: c's sidecar may still run and
// serve a its old view, renewing a's lease. Before, c counted as gone (a
// lease-deadline cutoff from when it was seen gone) at once; now only once
// n1's kubelet has stopped its containers, and from then on.
func TestPeerPodGoneWaitsForTheKubelet(t *testing.T) {
	nodeClock := t0.Add(-3 * time.Hour) // the node's clock, far from the operator's
	cl := nodeWorld(t, true, nodeClock)
	now := t0
	clock := clockAt(func() time.Time { return now })
	reg := authority.NewRegistry(clock.Now)
	deb, _ := topology.NewDebouncer(1, 1)
	if _, _, err := deb.Observe(t0, topology.ProbeFailed); err != nil {
		t.Fatal(err)
	}
	l := newPodGoneLoop(cl, clock, reg)
	l.deb["a"] = deb
	g := testGroup("orders", "b", 4)
	g.Spec.Sites = append(g.Spec.Sites, v1alpha1.Site{Name: "c"})
	l.key = types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
	list := func(pods map[types.UID]podNode) {
		var refs []authority.PodRef
		for uid := range pods {
			refs = append(refs, authority.PodRef{UID: uid})
		}
		reg.SawPods(l.key, "c", refs)
		l.trackGonePods(t.Context(), "c", pods)
		l.podsNow = map[string][]time.Time{}
	}
	peerC := func() topology.PeerAdoption {
		for _, p := range l.evidence(g, "a", failover.Settings{}).Peers {
			if p.Site == "c" {
				return p
			}
		}
		t.Fatal("no peer c")
		return topology.PeerAdoption{}
	}
	list(map[types.UID]podNode{"c1": {node: "n1"}})
	now = t0.Add(5 * time.Second)
	list(nil) // force-deleted
	if p := peerC(); p.PodGone {
		t.Fatalf("peer c counted gone before its kubelet beat: %+v", p)
	}
	beatAt(t, cl, true, nodeClock.Add(time.Hour))
	now = t0.Add(20 * time.Second)
	list(nil)
	if p := peerC(); !p.PodGone || !p.GoneAt.Equal(now) {
		t.Fatalf("peer c once its kubelet stopped the containers: %+v, want gone from %v", p, now)
	}
}

// newPodGoneLoop is a group loop with just what the pod-gone checks read.
func newPodGoneLoop(cl client.Client, clk clock.Clock, reg *authority.Registry) *Loop {
	return &Loop{env: &Env{Reader: cl, Clock: clk, Registry: reg},
		deb: map[string]*topology.Debouncer{}, seenPod: map[string]bool{}, maybeSince: map[string]time.Time{},
		podNodes: map[string]map[types.UID]podNode{}, goneNodes: map[string]map[types.UID]goneWatch{},
		kubeletStopped: map[string]time.Time{}}
}
