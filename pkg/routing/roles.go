package routing

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// SetRoleLabels labels primarySite's Pods role=primary and every other
// site's Pods role=replica. With primarySite "" no Pod is primary: Pods that
// were primary lose the role label (a planned failover's drain: the fenced
// source serves neither Service) and the others stay replicas.
//
// It writes only Pods whose label differs, so calling it on every poll costs
// one List. Callers should do that: a restarted Pod comes back as a replica
// (mysqld boots read-only; the Deployment template always says replica,
// because changing the template would restart the Pod), and needs
// SetRoleLabels to become primary again once it is made writable.
func (r *Router) SetRoleLabels(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, primarySite string) error {
	if primarySite != "" {
		if _, err := findSite(g, primarySite); err != nil {
			return fmt.Errorf("set role labels: %w", err)
		}
	}
	var pods corev1.PodList
	err := r.Client.List(ctx, &pods, client.InNamespace(g.Namespace),
		client.MatchingLabels{v1alpha1.LabelGroup: g.Name})
	if err != nil {
		return fmt.Errorf("set role labels: list pods: %w", err)
	}
	for _, i := range patchOrder(pods.Items, primarySite) {
		p := &pods.Items[i]
		want, ok := wantRole(p.Labels, primarySite)
		// Losing the primary role, or becoming a replica from no role (an
		// old primary whose fence took the label away), the Pod is unjudged
		// as a replica: it leaves the read Services until ReadRoutes says.
		have := p.Labels[v1alpha1.LabelRole]
		unjudged := have == v1alpha1.RolePrimary || (ok && want == v1alpha1.RoleReplica && have != v1alpha1.RoleReplica)
		if err := r.patchRole(ctx, p, want, ok, unjudged); err != nil {
			return fmt.Errorf("set role labels %s: %w", primarySite, err)
		}
	}
	return nil
}

// patchOrder lists the indexes of the Pods whose role label must change, in
// the order to patch them: first every Pod losing the primary role, so that
// the -primary Service never selects two sites; then the new primary's
// Pods, so that clients reach it one write sooner than when the replicas
// go first (each patch moves an EndpointSlice, and proxies apply what they
// have seen); the other replicas last.
func patchOrder(pods []corev1.Pod, primarySite string) []int {
	var demote, promote, rest []int
	for i := range pods {
		labels := pods[i].Labels
		want, ok := wantRole(labels, primarySite)
		have, has := labels[v1alpha1.LabelRole]
		switch {
		case has == ok && have == want:
		case have == v1alpha1.RolePrimary:
			demote = append(demote, i)
		case ok && want == v1alpha1.RolePrimary:
			promote = append(promote, i)
		default:
			rest = append(rest, i)
		}
	}
	return append(append(demote, promote...), rest...)
}

// wantRole is a Pod's role label given the primary site; ok is false when
// the Pod should carry none.
func wantRole(labels map[string]string, primarySite string) (role string, ok bool) {
	switch {
	case primarySite != "" && labels[v1alpha1.LabelSite] == primarySite:
		return v1alpha1.RolePrimary, true
	case primarySite == "" && labels[v1alpha1.LabelRole] == v1alpha1.RolePrimary:
		return "", false
	default:
		return v1alpha1.RoleReplica, true
	}
}

// patchRole sets (ok) or removes the role label with a merge patch that
// touches that one label. A Pod unjudged as a replica (losing the primary
// role, or becoming a replica from no role) also loses the routable label
// in the same patch (dropRoutable): it must not enter the read Services
// unjudged; the next settled ReadRoutes puts it back once it replicates
// healthily. A Pod that went away meanwhile is
// not an error.
func (r *Router) patchRole(ctx context.Context, p *corev1.Pod, role string, ok, dropRoutable bool) error {
	var value any
	if ok {
		value = role
	}
	labels := map[string]any{v1alpha1.LabelRole: value}
	if dropRoutable {
		labels[v1alpha1.LabelRoutable] = nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	err = r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, body), client.FieldOwner(FieldOwner))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	return nil
}
