package routing

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// The cache (Dragonfly) that follows the MySQL primary, when
// spec.dragonfly.enabled: per site a Deployment "<group>-<site>-dragonfly"
// and a Service of the same name, and one Service "<group>-dragonfly" that
// selects the Pod carrying the traffic label, the one next to the MySQL
// primary (SetCacheTraffic moves it).
//
// Cache Pods carry none of the MySQL Pods' labels (group, site, role): the
// poll loop lists a group's Pods by LabelGroup and the -primary, -replicas
// and site Services select on it, and none of them may ever pick a cache
// Pod. They carry CacheLabelGroup and CacheLabelSite instead.
const (
	// CacheLabelGroup names the group a cache Pod belongs to.
	CacheLabelGroup = "bloodraven.shipstream.io/dragonfly-group"
	// CacheLabelSite names the site a cache Pod belongs to.
	CacheLabelSite = "bloodraven.shipstream.io/dragonfly-site"
	// CacheLabelTraffic is "true" on the cache Pod the <group>-dragonfly
	// Service selects.
	CacheLabelTraffic = "bloodraven.shipstream.io/dragonfly-traffic"
	// CachePort is the cache's port, Redis's and Dragonfly's default.
	CachePort     = 6379
	PortNameCache = "redis"
	// ContainerCache is the cache container's name.
	ContainerCache = "dragonfly"
	cacheComponent = "dragonfly"
)

// CacheSiteName names a site's cache Deployment and Service: "<group>-<site>-dragonfly".
func CacheSiteName(group, site string) string { return SiteName(group, site) + "-dragonfly" }

// CacheServiceName names the Service applications use: "<group>-dragonfly".
func CacheServiceName(group string) string { return group + "-dragonfly" }

// CacheSiteHost is the in-cluster DNS name of a site's cache Service.
func CacheSiteHost(namespace, group, site string) string {
	return CacheSiteName(group, site) + "." + namespace + ".svc"
}

// cacheObjectLabels are on the cache's Deployments and Services (not Pods).
func cacheObjectLabels(g *v1alpha1.MysqlFailoverGroup, site string) map[string]string {
	l := groupLabels(g)
	l[labelComponent] = cacheComponent
	if site != "" {
		l[CacheLabelSite] = site
	}
	return l
}

// cacheSiteSelector selects one site's cache Pods.
func cacheSiteSelector(g *v1alpha1.MysqlFailoverGroup, site string) map[string]string {
	return map[string]string{CacheLabelGroup: g.Name, CacheLabelSite: site}
}

// renderCacheObjects renders the cache's objects: per site a Service and a
// Deployment, then the group's traffic Service. Nil without Dragonfly.
func (r *Router) renderCacheObjects(g *v1alpha1.MysqlFailoverGroup) []client.Object {
	if !g.Spec.Dragonfly.Enabled {
		return nil
	}
	var objs []client.Object
	for _, s := range g.Spec.Sites {
		objs = append(objs, renderCacheSiteService(g, s), renderCacheDeployment(g, s))
	}
	return append(objs, renderCacheService(g))
}

// renderCacheSiteService is how the operator and the other sites' caches
// reach one site's cache; not-ready addresses included, as for MySQL.
func renderCacheSiteService(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(CacheSiteName(g.Name, s.Name), g, cacheObjectLabels(g, s.Name)),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: cacheSiteSelector(g, s.Name), PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{servicePort(PortNameCache, CachePort)},
		},
	}
}

// renderCacheService is the <group>-dragonfly Service applications use.
func renderCacheService(g *v1alpha1.MysqlFailoverGroup) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(CacheServiceName(g.Name), g, cacheObjectLabels(g, "")),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{CacheLabelGroup: g.Name, CacheLabelTraffic: "true"},
			Ports:    []corev1.ServicePort{servicePort(PortNameCache, CachePort)},
		},
	}
}

// renderCacheDeployment runs one cache server on the site's nodes. The
// image's own defaults serve on CachePort; replication is set at run time
// (REPLICAOF), never in the template, so a topology change restarts nothing.
func renderCacheDeployment(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *appsv1.Deployment {
	podLabels := cacheSiteSelector(g, s.Name)
	return &appsv1.Deployment{
		ObjectMeta: objectMeta(CacheSiteName(g.Name, s.Name), g, cacheObjectLabels(g, s.Name)),
		Spec: appsv1.DeploymentSpec{
			Replicas:             ptr.To[int32](1),
			RevisionHistoryLimit: ptr.To[int32](3),
			Selector:             &metav1.LabelSelector{MatchLabels: cacheSiteSelector(g, s.Name)},
			// Recreate: one cache server per site, never two masters at a site.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					NodeSelector: NodeSelector(s),
					Containers: []corev1.Container{{
						Name: ContainerCache, Image: g.Spec.Dragonfly.Image,
						Ports: []corev1.ContainerPort{{Name: PortNameCache, ContainerPort: CachePort, Protocol: corev1.ProtocolTCP}},
					}},
				},
			},
		},
	}
}

// SetCacheTraffic labels site's cache Pods as carrying traffic and strips
// the label from every other cache Pod of g, the losing Pods first, so the
// <group>-dragonfly Service never selects two sites. site "" strips it
// everywhere (a planned failover's PromotingDragonfly, before the takeover).
func (r *Router) SetCacheTraffic(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, site string) error {
	if site != "" {
		if _, err := findSite(g, site); err != nil {
			return fmt.Errorf("set cache traffic: %w", err)
		}
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(g.Namespace), client.MatchingLabels{CacheLabelGroup: g.Name}); err != nil {
		return fmt.Errorf("set cache traffic: list pods: %w", err)
	}
	var gain []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		want, has := p.Labels[CacheLabelSite] == site, p.Labels[CacheLabelTraffic] == "true"
		switch {
		case has && !want:
			if err := r.patchCacheTraffic(ctx, p, false); err != nil {
				return fmt.Errorf("set cache traffic %q: %w", site, err)
			}
		case want && !has:
			gain = append(gain, p)
		}
	}
	for _, p := range gain {
		if err := r.patchCacheTraffic(ctx, p, true); err != nil {
			return fmt.Errorf("set cache traffic %q: %w", site, err)
		}
	}
	return nil
}

// patchCacheTraffic sets or removes the traffic label alone; a Pod gone
// meanwhile is not an error.
func (r *Router) patchCacheTraffic(ctx context.Context, p *corev1.Pod, on bool) error {
	var value any
	if on {
		value = "true"
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{CacheLabelTraffic: value}}})
	if err != nil {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	err = r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, body), client.FieldOwner(FieldOwner))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	return nil
}
