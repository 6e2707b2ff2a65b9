package grouploop

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// SidecarUpgrader is what the loop needs of pkg/authority's
// SidecarUpgrader: the hash of the sidecar binary the operator ships, and
// in-place upgrades and restarts sent in the background, one per site.
type SidecarUpgrader interface {
	Hash() string
	Busy(group types.NamespacedName, site string) bool
	Upgrade(group types.NamespacedName, site string, done func(error)) bool
	Restart(group types.NamespacedName, site string, done func(error)) bool
}

// reportedHash is the executable hash the site's sidecar sent in its last
// report to this operator, "" when none did.
func (l *Loop) reportedHash(site string) string {
	if l.env.Registry == nil {
		return ""
	}
	if rep := l.env.Registry.Sidecar(l.key, site).Report(); rep != nil {
		return rep.ExecutableHash
	}
	return ""
}

// upgradeInPlace starts the in-place upgrade PlanRollout asked for. Its
// outcome is an Event; the sidecar's next report says whether its hash
// changed, and the site counts as busy until UpgradeSettle after the end.
func (l *Loop) upgradeInPlace(g *v1alpha1.MysqlFailoverGroup, step topology.RolloutStep) {
	ev := g.DeepCopy()
	started := l.env.Upgrader.Upgrade(l.key, step.Site, func(err error) {
		l.upgradeDone(ev, step.Site, "upgrade", err)
	})
	if started {
		l.log.Info("in-place sidecar upgrade started", "site", step.Site)
	}
}

// upgradeDone reports an in-place upgrade's or restart's outcome, from the
// upgrader's goroutine, and wakes the loop.
func (l *Loop) upgradeDone(g *v1alpha1.MysqlFailoverGroup, site, what string, err error) {
	if err != nil {
		l.log.Error(err, "in-place sidecar "+what, "site", site)
		l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventSidecarUpgradeFailed,
			fmt.Sprintf("in-place %s of the sidecar of %s: %s", what, site, err.Error()))
	} else {
		l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventSidecarUpgraded,
			fmt.Sprintf("the sidecar of %s re-executed in place (%s); mysqld kept running", site, what))
	}
	if l.env.Wake != nil {
		l.env.Wake(l.key)
	}
}

// restartInPlace carries out the restart-inplace annotation: it asks the
// named site's sidecar to re-execute its binary as it is, then clears the
// annotation. Only the leader acts (mayRestart); an unknown site is
// refused, logged and cleared.
func (l *Loop) restartInPlace(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) {
	site, ok := g.Annotations[v1alpha1.RestartInPlaceAnnotation]
	if !ok || l.env.Upgrader == nil {
		return
	}
	if err := l.mayRestart(ctx); err != nil {
		return
	}
	known := false
	for _, s := range g.Spec.Sites {
		known = known || s.Name == site
	}
	ev := g.DeepCopy()
	switch {
	case !known:
		l.env.Notifier.Event(g, failover.EventWarning, v1alpha1.EventSidecarUpgradeFailed,
			fmt.Sprintf("restart-inplace: no site %q", site))
	case !l.env.Upgrader.Restart(l.key, site, func(err error) { l.upgradeDone(ev, site, "restart", err) }):
		return // busy: the annotation stays for a later pass
	}
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.RestartInPlaceAnnotation + `":null}}}`)
	obj := &v1alpha1.MysqlFailoverGroup{}
	obj.Namespace, obj.Name = g.Namespace, g.Name
	if err := l.env.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		l.log.Error(err, "clear the restart-inplace annotation")
	}
}
