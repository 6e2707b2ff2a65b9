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

// SetReadRoutes puts the routable label on the Pods of the sites routable
// names true and takes it off every other Pod of the group (a site routable
// does not name is not routable). The -replicas and -any Services, and
// additional ro and r Services, select on it. It returns the sites whose
// Pods it changed, in the order met, and writes nothing when every label
// is right already, so calling it on every poll costs one List.
//
// Pods leaving are patched before Pods joining: a site judged unhealthy
// stops taking reads no later than a healthy one starts.
func (r *Router) SetReadRoutes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, routable map[string]bool) ([]string, error) {
	return r.setReadRoutes(ctx, g, routable, true)
}

// LeaveReadRoutes is SetReadRoutes without joins: Pods of sites routable
// does not name true lose the label, no Pod gains it. For passes whose
// probes predate what the pass changed (a failover in flight): a removal
// on a stale probe is only conservative, an addition is not.
func (r *Router) LeaveReadRoutes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, routable map[string]bool) ([]string, error) {
	return r.setReadRoutes(ctx, g, routable, false)
}

func (r *Router) setReadRoutes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, routable map[string]bool, joins bool) ([]string, error) {
	var pods corev1.PodList
	err := r.Client.List(ctx, &pods, client.InNamespace(g.Namespace),
		client.MatchingLabels{v1alpha1.LabelGroup: g.Name})
	if err != nil {
		return nil, fmt.Errorf("set read routes: list pods: %w", err)
	}
	var leave, join []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		want := routable[p.Labels[v1alpha1.LabelSite]]
		has := p.Labels[v1alpha1.LabelRoutable] == RoutableValue
		switch {
		case has && !want:
			leave = append(leave, p)
		case want && !has && joins:
			join = append(join, p)
		}
	}
	var changed []string
	seen := map[string]bool{}
	for _, p := range append(leave, join...) {
		if err := r.patchRoutable(ctx, p, routable[p.Labels[v1alpha1.LabelSite]]); err != nil {
			return changed, fmt.Errorf("set read routes: %w", err)
		}
		if site := p.Labels[v1alpha1.LabelSite]; !seen[site] {
			seen[site] = true
			changed = append(changed, site)
		}
	}
	return changed, nil
}

// patchRoutable sets or removes the routable label with a merge patch that
// touches that one label. A Pod that went away meanwhile is not an error.
func (r *Router) patchRoutable(ctx context.Context, p *corev1.Pod, routable bool) error {
	var value any
	if routable {
		value = RoutableValue
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": map[string]any{v1alpha1.LabelRoutable: value}},
	})
	if err != nil {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	err = r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, body), client.FieldOwner(FieldOwner))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	return nil
}
