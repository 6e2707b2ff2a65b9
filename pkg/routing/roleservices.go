package routing

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// RoutableValue is LabelRoutable's value on a Pod that serves reads.
const RoutableValue = "true"

// roleSelectorFor is what a role Service of kind selects: rw the primary's
// Pods, ro the routable replicas, r every routable Pod.
func roleSelectorFor(g *v1alpha1.MysqlFailoverGroup, kind v1alpha1.ServiceKind) map[string]string {
	switch kind {
	case v1alpha1.ServiceRO:
		sel := roleSelector(g, v1alpha1.RoleReplica)
		sel[v1alpha1.LabelRoutable] = RoutableValue
		return sel
	case v1alpha1.ServiceR:
		return map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelRoutable: RoutableValue}
	default:
		return roleSelector(g, v1alpha1.RolePrimary)
	}
}

// defaultServices are the default role Services in a fixed order.
var defaultServices = []v1alpha1.ServiceKind{v1alpha1.ServiceRW, v1alpha1.ServiceRO, v1alpha1.ServiceR}

// defaultServiceName names a default role Service.
func defaultServiceName(group string, kind v1alpha1.ServiceKind) string {
	switch kind {
	case v1alpha1.ServiceRO:
		return ReplicasServiceName(group)
	case v1alpha1.ServiceR:
		return AnyServiceName(group)
	default:
		return PrimaryServiceName(group)
	}
}

// renderRoleServices renders every role Service g asks for: the defaults
// not disabled (never the primary one), then spec.services.additional.
func (r *Router) renderRoleServices(g *v1alpha1.MysqlFailoverGroup) []*corev1.Service {
	spec := g.Spec.Services
	if spec == nil {
		spec = &v1alpha1.ServicesSpec{}
	}
	var out []*corev1.Service
	for _, kind := range defaultServices {
		if kind != v1alpha1.ServiceRW && slices.Contains(spec.DisabledDefaultServices, kind) {
			continue
		}
		out = append(out, renderRoleService(g, defaultServiceName(g.Name, kind), kind, spec.Template))
	}
	for _, a := range spec.Additional {
		var svc *corev1.Service
		if a.UpdateStrategy == v1alpha1.ServiceUpdateReplace {
			svc = renderRoleService(g, g.Name+"-"+a.Name, a.SelectorType, a.ServiceTemplate)
		} else {
			svc = renderRoleService(g, g.Name+"-"+a.Name, a.SelectorType, spec.Template)
			overlay(svc, a.ServiceTemplate)
			stampOperatorLabels(g, svc, a.SelectorType)
		}
		out = append(out, svc)
	}
	return out
}

// renderRoleService is a role Service named name: a ClusterIP Service on
// the mysql port selecting kind's Pods, with tmpl laid over it. The
// selector, the port and the operator's labels are never the template's.
func renderRoleService(g *v1alpha1.MysqlFailoverGroup, name string, kind v1alpha1.ServiceKind,
	tmpl *v1alpha1.ServiceTemplate) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: objectMeta(name, g, nil),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: roleSelectorFor(g, kind),
			Ports:    []corev1.ServicePort{servicePort(PortNameMySQL, MySQLPort)},
		},
	}
	overlay(svc, tmpl)
	stampOperatorLabels(g, svc, kind)
	return svc
}

// stampOperatorLabels sets the labels the operator relies on over whatever
// a template said.
func stampOperatorLabels(g *v1alpha1.MysqlFailoverGroup, svc *corev1.Service, kind v1alpha1.ServiceKind) {
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	maps.Copy(svc.Labels, groupLabels(g))
	svc.Labels[labelComponent] = svc.Name[len(g.Name)+1:]
	svc.Labels[v1alpha1.LabelServiceRole] = string(kind)
}

// overlay lays a template's set fields over svc.
func overlay(svc *corev1.Service, tmpl *v1alpha1.ServiceTemplate) {
	if tmpl == nil {
		return
	}
	if len(tmpl.Metadata.Labels) > 0 {
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		for k, v := range tmpl.Metadata.Labels {
			svc.Labels[k] = string(v)
		}
	}
	if len(tmpl.Metadata.Annotations) > 0 {
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		maps.Copy(svc.Annotations, tmpl.Metadata.Annotations)
	}
	t := tmpl.Spec
	if t.Type != "" {
		svc.Spec.Type = corev1.ServiceType(t.Type)
	}
	if t.ExternalTrafficPolicy != "" {
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicy(t.ExternalTrafficPolicy)
	}
	if t.SessionAffinity != "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinity(t.SessionAffinity)
	}
	if len(t.LoadBalancerSourceRanges) > 0 {
		svc.Spec.LoadBalancerSourceRanges = slices.Clone(t.LoadBalancerSourceRanges)
	}
	fitType(svc)
}

// fitType drops what a template merged in that the Service's type cannot
// carry: a patch that makes a LoadBalancer template's Service a ClusterIP
// one leaves its source ranges and traffic policy behind, which the
// Service API refuses, and Converge would stop at that Service on every
// pass. Each template alone is checked by the CRD; the merge is not.
func fitType(svc *corev1.Service) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerSourceRanges = nil
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeNodePort {
		svc.Spec.ExternalTrafficPolicy = ""
	}
}

// pruneRoleServices deletes the group's role Services that wants does not
// name: a default Service disabled, an additional Service removed from the
// spec. Only Services g controls are deleted.
func (r *Router) pruneRoleServices(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, wants []*corev1.Service) error {
	keep := map[string]bool{}
	for _, w := range wants {
		keep[w.Name] = true
	}
	var list corev1.ServiceList
	err := r.Client.List(ctx, &list, client.InNamespace(g.Namespace),
		client.MatchingLabels{v1alpha1.LabelGroup: g.Name}, client.HasLabels{v1alpha1.LabelServiceRole})
	if err != nil {
		return fmt.Errorf("prune role services: %w", err)
	}
	for i := range list.Items {
		svc := &list.Items[i]
		if keep[svc.Name] || !metav1.IsControlledBy(svc, g) {
			continue
		}
		if err := r.Client.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("prune role service %s: %w", svc.Name, err)
		}
	}
	return nil
}
