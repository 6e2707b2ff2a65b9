package grouploop

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/authority"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// Review of this session's Pod-gone change: c's Pod c1 is force-deleted on
// a node whose kubelet never beats again (its sidecar may still run and
// relay a's old view to a); the Deployment's c2 reports the current
// generation. c's adoption must not give a a lease deadline before c1's
// kubelet is known to have stopped it.
func TestReplacementPodAdoptionWaitsForTheKubelet(t *testing.T) {
	nodeClock := t0.Add(-3 * time.Hour)
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
	list(map[types.UID]podNode{"c1": {node: "n1"}})
	now = t0.Add(5 * time.Second)
	list(map[types.UID]podNode{"c2": {node: "n2"}}) // c1 force-deleted, c2 created
	now = t0.Add(6 * time.Second)
	v := v1alpha1.ActiveSiteView{Namespace: g.Namespace, Group: g.Name, ActiveSite: "b", Generation: 4}
	reg.Serve(v, "c", &topology.Report{Generation: 4, Boot: "c2-boot"})
	reg.Serve(v, "b", &topology.Report{Generation: 4, Boot: "b-boot"})
	ev := l.evidence(g, "a", failover.Settings{LeaseTimeout: 10 * time.Second, PeerCheckInterval: time.Second})
	if d, ok := topology.LeaseDeadline(ev); ok {
		t.Fatalf("a's lease deadline %v although c1's kubelet never confirmed c1 stopped", d)
	}
}

// Review of this session's Pod-gone change: a Pod listed without a node
// may have been bound and started within the last poll, then cut off with
// its node and force-deleted. No kubelet vouches that it stopped, so
// however long this operator waits on its own clock, it never counts as
// stopped: its site stays pending.
func TestPodWithoutANodeNeverCountsStopped(t *testing.T) {
	cl := nodeWorld(t, true, t0)
	now := t0
	clock := clockAt(func() time.Time { return now })
	l := newPodGoneLoop(cl, clock, authority.NewRegistry(clock.Now))
	l.trackGonePods(t.Context(), "c", map[types.UID]podNode{"c1": {}})
	l.podsNow = map[string][]time.Time{}
	for _, after := range []time.Duration{time.Second, 10 * time.Minute} {
		now = t0.Add(after)
		l.trackGonePods(t.Context(), "c", map[types.UID]podNode{})
		if !l.gonePending("c") || !l.stoppedAt("c").IsZero() {
			t.Fatalf("%s after a node-less Pod went away: pending %v, stopped at %v", after, l.gonePending("c"), l.stoppedAt("c"))
		}
	}
}
