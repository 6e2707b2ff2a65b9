package routing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The ordered update (docs/upgrades.md): Converge creates a site's
// Deployment but never changes an existing one whose rendering changed.
// Such a site is stale; the group loop applies it with ApplySiteWorkload
// when pkg/topology's PlanRollout says it is that site's turn.

// Workload is what the ordered update needs to know of one site's Deployment.
type Workload struct {
	// Exists is false before Converge made the Deployment.
	Exists bool
	// Stale is true when the live Deployment is not what the spec renders now.
	Stale bool
	// Drifted is true when the live Deployment carries the current
	// template hash but applying the rendering would change its spec: it
	// was edited by hand (drift.go). DriftErr says why that could not be
	// told; Drifted is then false.
	Drifted  bool
	DriftErr error
	// KeepsPods is true when the site is Stale or Drifted and applying the
	// rendering would leave its Pod template and replica count as they
	// are: only the strategy, the revision history or the Deployment's own
	// metadata change, so no running Pod is replaced. False when it could
	// not be told.
	KeepsPods bool
	// StrategyDrifted is true when the Deployment's strategy is not
	// Recreate or carries rolling parameters (someone set RollingUpdate):
	// RestoreSiteStrategy sets it back without touching the Pod template.
	StrategyDrifted bool
	// StatusLags is true while the Deployment controller has not seen the
	// Deployment's latest generation (status.observedGeneration).
	StatusLags bool
	// PodDrifted is true when the Deployment is rolled out but a container
	// image of its Pod was changed on the Pod itself (poddrift.go); Pod,
	// PodUID and PodResourceVersion name that Pod for RepairSitePod.
	PodDrifted         bool
	Pod                string
	PodUID             types.UID
	PodResourceVersion string
	// Ready is true when the Deployment's rollout is complete and its Pod
	// available: the controller saw the latest generation, and every Pod
	// runs the current template and is available (kubectl rollout status).
	Ready bool
	// ResourceVersion of the live Deployment: ApplySiteWorkload changes it
	// only if nobody else did since.
	ResourceVersion string
}

// renderSiteDeployment renders a site's Deployment with its hash annotation.
func (r *Router) renderSiteDeployment(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) (*appsv1.Deployment, error) {
	d := r.renderDeployment(g, s)
	h, err := deploymentHash(d)
	if err != nil {
		return nil, fmt.Errorf("hash deployment of site %s: %w", s.Name, err)
	}
	d.Annotations = map[string]string{v1alpha1.AnnotationTemplateHash: h}
	return d, nil
}

// deploymentHash is the SHA-256 of what the operator renders for a
// Deployment: its labels and spec. encoding/json sorts map keys, so the
// same rendering always hashes the same.
func deploymentHash(d *appsv1.Deployment) (string, error) {
	b, err := json.Marshal(struct {
		Labels map[string]string     `json:"labels"`
		Spec   appsv1.DeploymentSpec `json:"spec"`
	}{d.Labels, d.Spec})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SiteWorkloads reads every site's Deployment through rd (the API server
// itself, so that a pass never acts on a cache older than its own last
// apply) and says which are stale, which drifted (drift.go) and which are ready.
func (r *Router) SiteWorkloads(ctx context.Context, rd client.Reader, g *v1alpha1.MysqlFailoverGroup) (map[string]Workload, error) {
	out := make(map[string]Workload, len(g.Spec.Sites))
	for _, s := range g.Spec.Sites {
		want, err := r.renderSiteDeployment(g, s)
		if err != nil {
			return nil, err
		}
		var live appsv1.Deployment
		err = rd.Get(ctx, client.ObjectKeyFromObject(want), &live)
		switch {
		case apierrors.IsNotFound(err):
			out[s.Name] = Workload{}
			continue
		case err != nil:
			return nil, fmt.Errorf("get deployment %s: %w", want.Name, err)
		}
		w := Workload{Exists: true, ResourceVersion: live.ResourceVersion, Ready: rolledOut(&live),
			Stale: live.Annotations[v1alpha1.AnnotationTemplateHash] != want.Annotations[v1alpha1.AnnotationTemplateHash]}
		d, err := r.compare(ctx, g, want, &live)
		if !w.Stale {
			w.Drifted = d.spec
		}
		w.KeepsPods, w.DriftErr, w.StrategyDrifted = err == nil && !d.pods, err, strategyDrifted(&live)
		w.StatusLags = live.Status.ObservedGeneration < live.Generation
		pod, err := podDrift(ctx, rd, g, s.Name, &live)
		if err != nil {
			return nil, err
		}
		if pod != nil {
			w.PodDrifted, w.Pod, w.PodUID, w.PodResourceVersion = true, pod.Name, pod.UID, pod.ResourceVersion
		}
		out[s.Name] = w
	}
	return out, nil
}

// rolledOut is kubectl rollout status's test: the Deployment controller
// saw the latest spec, and every replica is updated and available.
func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return want > 0 && st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want &&
		st.Replicas == want && st.AvailableReplicas == want
}

// ApplySiteWorkload applies the site's Deployment as the spec renders it
// now: the one step of the ordered update that restarts a site's Pod. With
// resourceVersion set, the write is refused (a conflict) when the live
// Deployment changed since it was read.
func (r *Router) ApplySiteWorkload(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, resourceVersion string) error {
	s, err := findSite(g, site)
	if err != nil {
		return fmt.Errorf("update site %s: %w", site, err)
	}
	d, err := r.renderSiteDeployment(g, s)
	if err != nil {
		return err
	}
	if resourceVersion, err = r.prepareApply(ctx, d, resourceVersion); err != nil {
		return fmt.Errorf("update site %s: %w", site, err)
	}
	d.ResourceVersion = resourceVersion
	if err := r.apply(ctx, g, d, true); err != nil {
		return fmt.Errorf("update site %s: %w", site, err)
	}
	return nil
}

// RestoreSiteStrategy sets the site's Deployment's strategy back to
// Recreate without rolling parameters, and touches nothing else: on a
// rolled-out Deployment no Pod is replaced. Refused (a conflict) when the
// Deployment changed since resourceVersion.
func (r *Router) RestoreSiteStrategy(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, resourceVersion string) error {
	var live appsv1.Deployment
	key := client.ObjectKey{Namespace: g.Namespace, Name: SiteName(g.Name, site)}
	if err := r.Client.Get(ctx, key, &live); err != nil {
		return fmt.Errorf("restore the strategy of site %s: %w", site, err)
	}
	if resourceVersion == "" {
		resourceVersion = live.ResourceVersion
	}
	if _, err := r.restoreStrategy(ctx, &live, resourceVersion); err != nil {
		return fmt.Errorf("site %s: %w", site, err)
	}
	return nil
}

// prepareApply removes what would make the apply of want invalid: rolling
// parameters another manager set (drift.go). It returns the
// resourceVersion the apply is to be based on.
func (r *Router) prepareApply(ctx context.Context, want *appsv1.Deployment, resourceVersion string) (string, error) {
	var live appsv1.Deployment
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		return resourceVersion, nil
	case err != nil:
		return "", fmt.Errorf("get deployment %s: %w", want.Name, err)
	case !strategyDrifted(&live):
		return resourceVersion, nil
	}
	if resourceVersion == "" {
		resourceVersion = live.ResourceVersion
	}
	return r.restoreStrategy(ctx, &live, resourceVersion)
}

// convergeDeployment creates a site's Deployment when there is none, and
// otherwise leaves it to the ordered update, with one exception: a
// Deployment made before hashes existed whose Pod template is what the
// spec renders (a server-side dry run tells) gets its hash without a restart.
func (r *Router) convergeDeployment(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) error {
	want, err := r.renderSiteDeployment(g, s)
	if err != nil {
		return err
	}
	var live appsv1.Deployment
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		return r.apply(ctx, g, want, true)
	case err != nil:
		return fmt.Errorf("get deployment %s: %w", want.Name, err)
	case live.Annotations[v1alpha1.AnnotationTemplateHash] != "":
		return nil // current, or stale: the ordered update's to apply
	}
	same, err := r.sameTemplate(ctx, g, want, &live)
	if err != nil || !same {
		return err
	}
	want.ResourceVersion = live.ResourceVersion
	return r.apply(ctx, g, want, true)
}

// sameTemplate applies want as a server-side dry run and reports whether
// the Pod template would stay as live has it.
func (r *Router) sameTemplate(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, want, live *appsv1.Deployment) (bool, error) {
	dry := want.DeepCopy()
	dry.ResourceVersion = live.ResourceVersion
	var out appsv1.Deployment
	if err := r.applyDry(ctx, g, dry, &out); err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(out.Spec.Template, live.Spec.Template), nil
}
