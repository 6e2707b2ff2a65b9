package routing

import (
	"context"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// TaintValue is the value of the lost-primary taint a group puts on nodes:
// "<namespace>.<group>", or a hash of it when that is not a valid label value.
// UntaintSite removes only taints with its own group's value.
func TaintValue(g *v1alpha1.MysqlFailoverGroup) string {
	v := g.Namespace + "." + g.Name
	if len(v) <= 63 {
		return v
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(v))
	return fmt.Sprintf("%.46s-%016x", g.Name, h.Sum64())
}

// TaintSite puts TaintLostPrimary (NoSchedule) on every node the site's
// taintNodeSelector matches. A site without taintNodeSelector taints nothing:
// an empty selector would match every node of the cluster. Nodes that
// already carry the taint (from any group) are left as they are.
func (r *Router) TaintSite(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) error {
	taint := corev1.Taint{Key: v1alpha1.TaintLostPrimary, Value: TaintValue(g), Effect: corev1.TaintEffectNoSchedule}
	err := r.editSiteNodes(ctx, g, site, func(ts []corev1.Taint) ([]corev1.Taint, bool) {
		for _, t := range ts {
			if t.Key == taint.Key && t.Effect == taint.Effect {
				return ts, false
			}
		}
		return append(ts, taint), true
	})
	if err != nil {
		return fmt.Errorf("taint site %s: %w", site, err)
	}
	return nil
}

// UntaintSite removes this group's TaintLostPrimary from the site's nodes
// and says from how many nodes it removed it.
func (r *Router) UntaintSite(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) (int, error) {
	value := TaintValue(g)
	removed := 0
	err := r.editSiteNodes(ctx, g, site, func(ts []corev1.Taint) ([]corev1.Taint, bool) {
		out := make([]corev1.Taint, 0, len(ts))
		for _, t := range ts {
			if t.Key != v1alpha1.TaintLostPrimary || t.Value != value {
				out = append(out, t)
			}
		}
		if len(out) != len(ts) {
			removed++
		}
		return out, len(out) != len(ts)
	})
	if err != nil {
		return removed, fmt.Errorf("untaint site %s: %w", site, err)
	}
	return removed, nil
}

// editSiteNodes applies edit to the taints of each node the site's
// taintNodeSelector matches, and writes the nodes it changed. Taints are an
// atomic list, so each write is an update guarded by resourceVersion and
// retried on conflict.
func (r *Router) editSiteNodes(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string,
	edit func([]corev1.Taint) ([]corev1.Taint, bool)) error {
	s, err := findSite(g, site)
	if err != nil {
		return err
	}
	if len(s.TaintNodeSelector) == 0 {
		return nil
	}
	var nodes corev1.NodeList
	sel := client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(s.TaintNodeSelector)}
	if err := r.Client.List(ctx, &nodes, sel); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var node corev1.Node
			if err := r.Client.Get(ctx, client.ObjectKey{Name: n.Name}, &node); err != nil {
				return err
			}
			taints, changed := edit(node.Spec.Taints)
			if !changed {
				return nil
			}
			node.Spec.Taints = taints
			return r.Client.Update(ctx, &node, client.FieldOwner(FieldOwner))
		})
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}
