//go:build envtest

package controller_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// A replica's Deployment edited by hand (another mysqld image, its
// template hash untouched) is drifted: the operator names it in a Warning
// Event and rolls it back through the ordered update, waiting first for
// the site to be back from the edit's own restart. Nothing else restarts.
func TestRolloutRepairsDrift(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.createGroup(nil)
	sim := e.simulateDeployments()
	e.startOperator()
	e.startSidecars("a", "b", "c")
	e.healthy()

	key := types.NamespacedName{Namespace: e.ns, Name: routing.SiteName("orders", "c")}
	var d appsv1.Deployment
	e.eventually(10*time.Second, "c's Deployment", func() bool { return cp.Client.Get(e.t.Context(), key, &d) == nil })
	image := d.Spec.Template.Spec.Containers[0].Image
	d.Spec.Template.Spec.Containers[0].Image = "mariadb:10.6"
	if err := cp.Client.Update(e.t.Context(), &d, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("edit c's Deployment: %v", err)
	}
	e.assertEvents(v1alpha1.EventSiteDrifted)
	e.eventually(60*time.Second, "c rolled back", func() bool {
		var now appsv1.Deployment
		return cp.Client.Get(e.t.Context(), key, &now) == nil && now.Spec.Template.Spec.Containers[0].Image == image &&
			len(sim.restarted()) == 2 && e.get().Status.Phase == v1alpha1.GroupPhaseNone
	})
	// The edit restarted c (as a Deployment controller would), then the roll back.
	if got := sim.restarted(); !slices.Equal(got, []string{"c", "c"}) {
		t.Fatalf("restarts %v, want c for the edit and c for the roll back", got)
	}
	if o := sim.overlapped(); len(o) > 0 {
		t.Fatalf("two sites down at once: %v", o)
	}
	ev := e.events(v1alpha1.EventSiteDrifted)
	if !strings.Contains(ev[0].Note, "Deployment of c was changed outside the operator") {
		t.Fatalf("SiteDrifted event %q", ev[0].Note)
	}
	e.assertEvents(v1alpha1.EventSiteUpdated, v1alpha1.EventUpdateCompleted)
	if g := e.get(); g.Status.ActiveSite != "a" || g.Status.PlannedFailover != nil {
		t.Fatalf("a replica's roll back moved the primary: active %s, planned %+v", g.Status.ActiveSite, g.Status.PlannedFailover)
	}
}
