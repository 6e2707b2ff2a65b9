package routing

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

// renderSiteService is how the operator and peer sidecars reach one site.
// It publishes not-ready addresses: a site whose readiness fails must still
// be reachable to be observed, fenced or promoted.
func (r *Router) renderSiteService(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(SiteName(g.Name, s.Name), g, siteLabels(g, s.Name)),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			Selector:                 siteSelector(g, s.Name),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{
				servicePort(PortNameMySQL, MySQLPort),
				servicePort(PortNameSidecar, SidecarPort),
			},
		},
	}
}
