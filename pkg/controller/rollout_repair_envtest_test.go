//go:build envtest

package controller_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A change of the primary's Deployment that replaces no Pod costs no
// switchover and no restart: a strategy set to RollingUpdate by hand is set
// back at once, and so is a Deployment whose hash is old but whose Pod
// template the rendering keeps (as after an operator upgrade that only
// changes the revision history). The update never begins.
func TestRolloutRepairsWithoutRestart(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	sim := e.simulateDeployments()
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()
	phases := e.logPhases()

	key := types.NamespacedName{Namespace: e.ns, Name: routing.SiteName("orders", "a")}
	edit := func(what string, f func(*appsv1.Deployment)) {
		t.Helper()
		var d appsv1.Deployment
		e.eventually(10*time.Second, "a's Deployment", func() bool { return cp.Client.Get(e.t.Context(), key, &d) == nil })
		f(&d)
		if err := cp.Client.Update(e.t.Context(), &d, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	one := intstr.FromInt32(1)
	edit("RollingUpdate on the primary", func(d *appsv1.Deployment) {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &one}}
	})
	e.eventually(30*time.Second, "a's strategy set back", func() bool {
		var d appsv1.Deployment
		return cp.Client.Get(e.t.Context(), key, &d) == nil &&
			d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType && d.Spec.Strategy.RollingUpdate == nil
	})
	var hash string
	edit("an old hash and revision history", func(d *appsv1.Deployment) {
		hash = d.Annotations[v1alpha1.AnnotationTemplateHash]
		d.Annotations[v1alpha1.AnnotationTemplateHash] = "0000"
		d.Spec.RevisionHistoryLimit = new(int32)
	})
	e.eventually(30*time.Second, "a's Deployment applied again", func() bool {
		var d appsv1.Deployment
		return cp.Client.Get(e.t.Context(), key, &d) == nil && d.Annotations[v1alpha1.AnnotationTemplateHash] == hash &&
			d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit == 3
	})
	e.assertEvents(v1alpha1.EventSiteRepaired)
	time.Sleep(3 * time.Second) // a pass that would start an update has run
	phases.end()
	if got := sim.restarted(); len(got) > 0 {
		t.Fatalf("restarted %v, want no Pod replaced", got)
	}
	g := e.get()
	if g.Status.ActiveSite != "a" || g.Status.PlannedFailover != nil {
		t.Fatalf("a repair moved the primary: active %s, planned %+v", g.Status.ActiveSite, g.Status.PlannedFailover)
	}
	for _, l := range phases.lines() {
		if l != ": " && l[:1] != ":" {
			t.Fatalf("the update began (%q), want no phase: %v", l, phases.lines())
		}
	}
}
