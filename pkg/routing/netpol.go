package routing

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// NetworkPolicyOptions say who may reach a group's Pods besides the group
// itself. Group Pods live in user namespaces that the chart cannot know,
// so the operator renders one NetworkPolicy per group (docs/security.md).
type NetworkPolicyOptions struct {
	// OperatorNamespace and OperatorPodLabels select the operator's Pods.
	OperatorNamespace string
	OperatorPodLabels map[string]string
	// MySQLFrom are the peers allowed to reach mysqld besides the operator
	// and the group; empty allows any source (applications may live
	// anywhere; mysqld's accounts protect the port).
	MySQLFrom []networkingv1.NetworkPolicyPeer
}

// NetworkPolicyName names a group's NetworkPolicy: "<group>-sites".
func NetworkPolicyName(group string) string { return group + "-sites" }

// labelNamespaceName is the label the API server puts on every namespace.
const labelNamespaceName = "kubernetes.io/metadata.name"

// renderNetworkPolicy admits, to the group's Pods:
//   - mysqld and the sidecar's peer port: from the group's own Pods
//     (replication, peers) and from the operator's Pods (probes, fences,
//     promotion, nudges);
//   - mysqld: from MySQLFrom (applications), any source when empty;
//   - the sidecar's health port: from any source (kubelet probes, metrics).
//
// Every other ingress to the group's Pods is dropped by a CNI that
// enforces NetworkPolicy. Egress is not restricted.
func (r *Router) renderNetworkPolicy(g *v1alpha1.MysqlFailoverGroup) *networkingv1.NetworkPolicy {
	np := r.opts.NetworkPolicy
	port := func(p int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptrProtocol(corev1.ProtocolTCP), Port: ptrPort(p)}
	}
	group := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: groupSelector(g)}}
	operator := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelNamespaceName: np.OperatorNamespace}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: np.OperatorPodLabels},
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: objectMeta(NetworkPolicyName(g.Name), g, groupLabels(g)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: groupSelector(g)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{group, operator}, Ports: []networkingv1.NetworkPolicyPort{
					port(MySQLPort), port(SidecarPort)}},
				{From: np.MySQLFrom, Ports: []networkingv1.NetworkPolicyPort{port(MySQLPort)}},
				{Ports: []networkingv1.NetworkPolicyPort{port(SidecarHealthPort)}},
			},
		},
	}
}

// groupSelector selects every Pod of the group.
func groupSelector(g *v1alpha1.MysqlFailoverGroup) map[string]string {
	return map[string]string{v1alpha1.LabelGroup: g.Name}
}

func ptrProtocol(p corev1.Protocol) *corev1.Protocol { return &p }

func ptrPort(p int32) *intstr.IntOrString {
	v := intstr.FromInt32(p)
	return &v
}
