package routing

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Drift of the Pods themselves (docs/upgrades.md, "Drift"): a Pod's
// container images are the one part of its spec that matters and that
// someone may change on the Pod rather than on its Deployment (kubectl set
// image pod/..., kubectl edit pod). The kubelet then restarts that
// container with the other image while the Deployment still says the old
// one, so nothing the Deployment shows tells. A site Pod is drifted when
// an image of one of its containers (or init containers) differs from its
// rolled-out Deployment's template; the ordered update sets it back with
// RepairSitePod, in the same order as any restart, since the kubelet
// restarts each container whose image changes. Labels and annotations on
// the Pod (the operator's own role label among them), and tolerations
// added to it, are not drift: the operator does not own them on the Pod.

// podDrift is the site's first Pod whose images differ from live's
// template, nil when none does or live is not rolled out (its Pods then
// run an older template on purpose, and the site is not back anyway).
func podDrift(ctx context.Context, rd client.Reader, g *v1alpha1.MysqlFailoverGroup, site string,
	live *appsv1.Deployment) (*corev1.Pod, error) {
	if !rolledOut(live) {
		return nil, nil
	}
	var pods corev1.PodList
	if err := rd.List(ctx, &pods, client.InNamespace(g.Namespace), client.MatchingLabels(siteSelector(g, site))); err != nil {
		return nil, fmt.Errorf("list the Pods of site %s: %w", site, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && len(imagePatch(&live.Spec.Template.Spec, &p.Spec)) > 0 {
			return p, nil
		}
	}
	return nil, nil
}

// imagePatch lists the containers of pod whose image is not want's, with
// want's image: what a strategic merge patch needs to set them back.
func imagePatch(want, pod *corev1.PodSpec) map[string][]map[string]string {
	out := map[string][]map[string]string{}
	diff := func(key string, want, have []corev1.Container) {
		for _, h := range have {
			for _, w := range want {
				if w.Name == h.Name && w.Image != h.Image {
					out[key] = append(out[key], map[string]string{"name": w.Name, "image": w.Image})
				}
			}
		}
	}
	diff("containers", want.Containers, pod.Containers)
	diff("initContainers", want.InitContainers, pod.InitContainers)
	return out
}

// RepairSitePod sets the images of the site's Pod named pod back to its
// Deployment's template: the kubelet restarts each container whose image
// changes (its preStop hook first). Refused when the Pod changed since
// resourceVersion, or is another Pod by now (uid).
func (r *Router) RepairSitePod(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site, pod string, uid types.UID,
	resourceVersion string) error {
	var live appsv1.Deployment
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: SiteName(g.Name, site)}, &live); err != nil {
		return fmt.Errorf("repair the Pod of site %s: %w", site, err)
	}
	var p corev1.Pod
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: pod}, &p); err != nil {
		return fmt.Errorf("repair the Pod of site %s: %w", site, err)
	}
	spec := imagePatch(&live.Spec.Template.Spec, &p.Spec)
	if len(spec) == 0 {
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": uid, "resourceVersion": resourceVersion},
		"spec":     spec,
	})
	if err != nil {
		return fmt.Errorf("repair the Pod of site %s: %w", site, err)
	}
	if err := r.Client.Patch(ctx, &p, client.RawPatch(types.StrategicMergePatchType, body)); err != nil {
		return fmt.Errorf("set the images of Pod %s of site %s back: %w", pod, site, err)
	}
	return nil
}
