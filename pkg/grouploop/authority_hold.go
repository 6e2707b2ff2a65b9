package grouploop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/failover"
	"github.com/shipstream/bloodraven/pkg/routing"
	"github.com/shipstream/bloodraven/pkg/topology"
)

// authorityHold checks the persisted authority against the generations the
// group's sidecars hold (topology.CheckAuthority) before the pass does
// anything, and reports whether the pass must stop there:
//   - regressed: the conditions say AuthorityRegressed and nothing else
//     happens (no bootstrap, no publication, no re-assertion, no failover);
//   - confirmed by a person (ConfirmAuthorityAnnotation): the generation is
//     raised above every reported one, the annotation removed, and the next
//     pass starts from there;
//   - a confirmation not applied (not a usable value, below a reported
//     generation, or nothing to confirm) is removed with a Warning
//     AuthorityConfirmFailed Event, counted and logged (authority_confirm.go),
//     so it can never confirm a later regression nobody checked;
//   - a group without a generation yet waits for its sidecars (bootstrapReady).
func (l *Loop) authorityHold(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) bool {
	st := &g.Status
	sites := siteNames(g)
	reported := l.env.Registry.MaxReported(l.key, sites)
	value, present := g.Annotations[v1alpha1.ConfirmAuthorityAnnotation]
	confirm, site, bad := parseConfirmAuthority(value, sites)
	verdict, gen := topology.CheckAuthority(topology.AuthorityCheck{Status: st.TopologyGeneration,
		Reported: reported, Confirm: confirm})
	if present && verdict != topology.AuthorityConfirmed {
		// After the hold's status write: the removal changes the object.
		defer l.refuseConfirmation(ctx, g, value, refusal(bad, confirm, reported, st.TopologyGeneration))
	}
	switch verdict {
	case topology.AuthorityRegressed:
		l.holdRegressed(ctx, g, reported)
		return true
	case topology.AuthorityConfirmed:
		l.confirmAuthority(ctx, g, gen, site, reported)
		return true
	}
	l.env.Notifier.clearOnChange(g, v1alpha1.ReasonAuthorityRegressed)
	return st.TopologyGeneration == 0 && st.ActiveSite == "" && !l.bootstrapReady(g)
}

// bootstrapReady reports whether a group without any generation may get
// its first one: every site's sidecar reported to this operator (none holds
// a higher generation, or the check would have said so), or two
// peerCheckIntervals passed since this operator started, within which a
// sidecar that can reach it asks at least once.
func (l *Loop) bootstrapReady(g *v1alpha1.MysqlFailoverGroup) bool {
	if l.env.Registry.ReportedAll(l.key, siteNames(g)) {
		return true
	}
	interval := g.Spec.Sidecar.PeerCheckInterval.Duration
	if interval <= 0 {
		interval = 5 * time.Second
	}
	return l.env.Clock.Now().Sub(l.env.Registry.Started()) >= 2*interval
}

// holdRegressed records the AuthorityRegressed conditions and Event, and
// nothing else: the conditions are the only status written.
func (l *Loop) holdRegressed(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, reported int64) {
	msg := fmt.Sprintf("a sidecar holds topology generation %d but status holds %d: status was emptied, restored or "+
		"written back. Nothing changes until a person checks which site is primary and sets the annotation %s=%d "+
		"(or %d:<site> to name the active site)", reported, g.Status.TopologyGeneration,
		v1alpha1.ConfirmAuthorityAnnotation, reported, reported)
	if reported > topology.MaxConfirmGeneration {
		msg = fmt.Sprintf("a sidecar reports topology generation %d, above any that can be confirmed (%d) and that "+
			"no operator publishes: that sidecar is faulty. Nothing changes until its stored generation is repaired "+
			"and it is restarted", reported, topology.MaxConfirmGeneration)
	}
	for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionDegraded, v1alpha1.ConditionFailoverBlocked} {
		status := metav1.ConditionTrue
		if typ == v1alpha1.ConditionReady {
			status = metav1.ConditionFalse
		}
		meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: typ, Status: status,
			Reason: v1alpha1.ReasonAuthorityRegressed, Message: msg, ObservedGeneration: g.Generation,
			LastTransitionTime: stamp(l.env.Clock.Now())})
	}
	l.env.Notifier.EventOnChange(g, failover.EventWarning, v1alpha1.ReasonAuthorityRegressed, msg)
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "write status", "authority", "regressed")
	}
}

// confirmAuthority persists the confirmed generation (and the named site,
// or status.activeSite as it is; when empty, Decide resolves it from the
// sites that write), then removes the annotation.
func (l *Loop) confirmAuthority(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, gen int64, site string,
	reported int64) {
	st := &g.Status
	value := g.Annotations[v1alpha1.ConfirmAuthorityAnnotation]
	st.TopologyGeneration = gen
	if site != "" {
		st.ActiveSite = site
	}
	for _, s := range g.Spec.Sites {
		failover.SiteRecord(st, s.Name)
	}
	if err := l.patcher.PersistStatus(ctx, g); err != nil {
		l.log.Error(err, "write status", "authority", "confirmed")
		return
	}
	l.env.Notifier.Event(g, failover.EventNormal, v1alpha1.EventAuthorityConfirmed,
		fmt.Sprintf("authority confirmed (%s=%s): generation %d, above every reported one (%d); active site %q",
			v1alpha1.ConfirmAuthorityAnnotation, value, gen, reported, st.ActiveSite))
	if err := clearAnnotation(ctx, l.env.Client, l.key, v1alpha1.ConfirmAuthorityAnnotation, value); err != nil {
		l.log.Error(err, "remove the confirm-authority annotation")
	}
}

// clearAnnotation removes annotation key from the object when it still has
// value (a JSON patch that tests it first, so a newer value stays).
func clearAnnotation(ctx context.Context, c client.Client, obj types.NamespacedName, key, value string) error {
	path := "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
	body, err := json.Marshal([]map[string]any{{"op": "test", "path": path, "value": value}, {"op": "remove", "path": path}})
	if err != nil {
		return fmt.Errorf("annotation patch: %w", err)
	}
	g := &v1alpha1.MysqlFailoverGroup{}
	g.Namespace, g.Name = obj.Namespace, obj.Name
	if err := c.Patch(ctx, g, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(routing.FieldOwner)); err != nil {
		return fmt.Errorf("remove %s from %s: %w", key, obj, err)
	}
	return nil
}
