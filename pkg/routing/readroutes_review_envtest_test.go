//go:build envtest

package routing_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// TestDrainedSourceStaysOutOfReadServices (review of issue 20)
// replays a planned failover's role changes. The fence pass strips a's
// primary role (SetRoleLabels(g, "")), and routable with it; the poll
// loop judges no read routes while the failover holds the topology
// (grouploop routesSettled). On the promote pass SetRoleLabels(g, "b")
// gives a the replica role; a, which had no role any more, must not keep
// or gain routable: it enters -replicas only once ReadRoutes judged it.
func TestDrainedSourceStaysOutOfReadServices(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "drain", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc"}}, nil)
	r := newRouter()
	converge(t, r, g)
	createPods(t, g)
	ctx := testContext(t)
	replica := func(name string) topology.SiteView {
		return topology.SiteView{Name: name, State: v1alpha1.StateReadOnly,
			Replication: topology.Replication{Running: true, Lag: time.Second}}
	}
	readRoutes := func(active string, views ...topology.SiteView) {
		t.Helper()
		routable := map[string]bool{}
		for _, rt := range topology.ReadRoutes(topology.ReadRouteInput{Sites: views, Active: active, MaxLag: 30 * time.Second}) {
			routable[rt.Site] = rt.Routable
		}
		if _, err := r.SetReadRoutes(ctx, g, routable); err != nil {
			t.Fatal(err)
		}
	}
	start := []topology.SiteView{{Name: "a", State: v1alpha1.StateWritable}, replica("b"), replica("c")}
	if err := r.SetRoleLabels(ctx, g, "a"); err != nil {
		t.Fatal(err)
	}
	readRoutes("a", start...)

	// Fence pass: observed at its start as above; strips a's role, fences a.
	if err := r.SetRoleLabels(ctx, g, ""); err != nil {
		t.Fatal(err)
	}
	if got := selected(t, ns, routing.AnyServiceName(g.Name)); slices.Contains(got, "a") {
		t.Errorf("fence pass: the fenced, draining source a is back in -any: %v", got)
	}

	// Promote pass (plannedNext runs it at once): b made primary.
	if err := r.SetRoleLabels(ctx, g, "b"); err != nil {
		t.Fatal(err)
	}
	if got := selected(t, ns, routing.ReplicasServiceName(g.Name)); slices.Contains(got, "a") {
		t.Errorf("promote pass: the old primary a is in -replicas before any ReadRoutes judged it a replica: %v", got)
	}
}

// TestPatchedTemplatesMergeIntoAValidService: each template passes
// the CRD's rules alone, but an additional Service with strategy patch is
// the shared template with its own laid over it, and the merge can be a
// ClusterIP Service carrying externalTrafficPolicy and
// loadBalancerSourceRanges, which the Service API refuses: Converge stops
// at it on every reconcile.
func TestPatchedTemplatesMergeIntoAValidService(t *testing.T) {
	ns := newNamespace(t)
	services := map[string]any{
		"template": map[string]any{"spec": map[string]any{"type": "LoadBalancer", "externalTrafficPolicy": "Local",
			"loadBalancerSourceRanges": []any{"10.0.0.0/8"}}},
		"additional": []any{map[string]any{"name": "internal", "selectorType": "ro",
			"serviceTemplate": map[string]any{"spec": map[string]any{"type": "ClusterIP"}}}},
	}
	g := createGroup(t, ns, "merge", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}},
		map[string]any{"services": services})
	if err := newRouter().Converge(testContext(t), g); err != nil {
		t.Fatalf("the CRD accepted a spec whose merged Service the API refuses: %v", err)
	}
}

// TestLeaveReadRoutesOnlyRemoves (review of bcb39d3): while a failover
// holds the topology the poll loop judges read routes on probes taken
// before its pass acted; a site may leave on them, none may join. A
// replica that broke during a long failover leaves at once; a healthy one
// not yet labelled waits for a settled pass.
func TestLeaveReadRoutesOnlyRemoves(t *testing.T) {
	ns := newNamespace(t)
	g := createGroup(t, ns, "leave", []site{{name: "a", zone: "za"}, {name: "b", zone: "zb"}, {name: "c", zone: "zc"}}, nil)
	r := newRouter()
	converge(t, r, g)
	createPods(t, g)
	ctx := testContext(t)
	if err := r.SetRoleLabels(ctx, g, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SetReadRoutes(ctx, g, map[string]bool{"a": true, "b": true}); err != nil {
		t.Fatal(err)
	}
	changed, err := r.LeaveReadRoutes(ctx, g, map[string]bool{"a": true, "b": false, "c": true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []string{"b"}) {
		t.Fatalf("changed %v, want only b (leaving)", changed)
	}
	got := selected(t, ns, routing.AnyServiceName(g.Name))
	if slices.Contains(got, "b") || slices.Contains(got, "c") || !slices.Contains(got, "a") {
		t.Fatalf("-any selects %v; want a only: b left, c may not join while unsettled", got)
	}
}
