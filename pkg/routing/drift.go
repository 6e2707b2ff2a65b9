package routing

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Drift (docs/upgrades.md, "Drift"): a site's Deployment whose template
// hash says it is what the spec renders may still have been edited by hand
// (kubectl edit, set image, scale). Such a Deployment is drifted, and the
// ordered update rolls it back as it would a stale one. The test is a
// server-side dry run of the rendering: the API server applies its own
// defaults and the field ownership, so the answer is what applying it
// would change, not a field-by-field guess. Fields another manager added
// that the operator never sets (an extra label, an extra environment
// variable) are kept by an apply, and so are not drift.

// driftKey is what a drift check's answer depends on: the live
// Deployment's spec (its UID and generation: any change of the spec raises
// the generation) and the rendering (its hash).
type driftKey struct {
	uid        types.UID
	generation int64
	hash       string
}

// driftCache remembers the last answer per Deployment, so that a site is
// dry-run once per change, not once per pass.
type driftCache struct {
	mu   sync.Mutex
	last map[types.NamespacedName]driftAnswer
}

type driftAnswer struct {
	key  driftKey
	diff specDiff
}

// specDiff is what applying the rendering would change of a live Deployment.
type specDiff struct {
	// spec: anything of its spec.
	spec bool
	// pods: its Pod template or its replica count, so that its Pod is
	// replaced (or one started or stopped). A change of anything else
	// (the strategy, the revision history, the Deployment's own labels and
	// annotations) leaves the running Pod as it is.
	pods bool
}

func (c *driftCache) get(name types.NamespacedName, key driftKey) (specDiff, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.last[name]
	return a.diff, ok && a.key == key
}

func (c *driftCache) put(name types.NamespacedName, key driftKey, diff specDiff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[types.NamespacedName]driftAnswer{}
	}
	c.last[name] = driftAnswer{key: key, diff: diff}
}

// compare reports what applying want (the current rendering) would change
// of live's spec. A live Deployment that changed since it was read is
// reported as changing its Pods in this pass (the dry run is refused on its
// old resourceVersion, and the safe guess is the one that orders the
// apply); the next pass reads it again. A strategy another manager set
// cannot be dry-run (see restoreStrategy): it is a change of the spec, and
// of the Pods for all this pass can tell.
func (r *Router) compare(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, want, live *appsv1.Deployment) (specDiff, error) {
	name := types.NamespacedName{Namespace: live.Namespace, Name: live.Name}
	key := driftKey{uid: live.UID, generation: live.Generation, hash: want.Annotations[v1alpha1.AnnotationTemplateHash]}
	if d, ok := r.drift.get(name, key); ok {
		return d, nil
	}
	if strategyDrifted(live) {
		d := specDiff{spec: true, pods: true}
		r.drift.put(name, key, d)
		return d, nil
	}
	dry := want.DeepCopy()
	dry.ResourceVersion = live.ResourceVersion
	var out appsv1.Deployment
	err := r.applyDry(ctx, g, dry, &out)
	switch {
	case apierrors.IsConflict(err):
		return specDiff{pods: true}, nil
	case err != nil:
		return specDiff{pods: true}, fmt.Errorf("drift check of %s: %w", live.Name, err)
	}
	d := specDiff{spec: !equality.Semantic.DeepEqual(out.Spec, live.Spec),
		pods: !equality.Semantic.DeepEqual(out.Spec.Template, live.Spec.Template) ||
			!equality.Semantic.DeepEqual(out.Spec.Replicas, live.Spec.Replicas)}
	r.drift.put(name, key, d)
	return d, nil
}

// strategyDrifted: live is not Recreate, carries rolling parameters, or is
// paused. Recreate is what keeps two mysqld off one volume. A paused
// Deployment never rolls out what the ordered update applies, so the
// update would wait on it for ever; the operator never sets paused, so an
// apply would keep it (another manager owns it), and it is set back here.
func strategyDrifted(live *appsv1.Deployment) bool {
	st := live.Spec.Strategy
	return st.Type != appsv1.RecreateDeploymentStrategyType || st.RollingUpdate != nil || live.Spec.Paused
}

// restoreStrategy sets live's strategy back to Recreate without its rolling
// parameters, and unpauses it, which an apply cannot remove while another manager owns
// them, and returns the new resourceVersion. The Pod template is not
// touched, so no Pod restarts. The patch is refused if live changed since
// resourceVersion.
func (r *Router) restoreStrategy(ctx context.Context, live *appsv1.Deployment, resourceVersion string) (string, error) {
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"paused":null,"strategy":{"type":%q,"rollingUpdate":null}}}`,
		resourceVersion, appsv1.RecreateDeploymentStrategyType)
	if err := r.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return "", fmt.Errorf("restore the Recreate strategy of %s: %w", live.Name, err)
	}
	return live.ResourceVersion, nil
}
