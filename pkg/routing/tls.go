package routing

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

// With Options.CA set, routing renders the authenticated transport
// (docs/security.md): each site gets a Secret <group>-<site>-tls with a
// certificate that names the site (pkg/pki), mounted only into that site's
// Pod; the sidecar serves its peer port over HTTPS with it, calls the
// operator and its peers with it, and serves its probes and metrics on a
// separate plain-HTTP port. Without a CA the Pod is rendered as before.

// Ports, volume and folder of the authenticated transport.
const (
	// SidecarHealthPort serves /healthz, /readyz, /metrics and /status in plain HTTP.
	SidecarHealthPort     = 8081
	PortNameSidecarHealth = "sidecar-health"
	// VolumeTLS is the site Pod's volume of its TLS Secret; TLSDir is where
	// the sidecar mounts it (tls.crt, tls.key, ca.crt). mysqld may mount the
	// same volume.
	VolumeTLS = "tls"
	TLSDir    = "/etc/bloodraven/tls"
)

// TLSSecretName names a site's certificate Secret: "<group>-<site>-tls".
func TLSSecretName(group, site string) string { return SiteName(group, site) + "-tls" }

// SiteDNSNames are the DNS names a site's certificate carries: its own
// Service, and the group's -primary, -replicas and -any Services (the
// site may serve any role), each short, namespaced, .svc and .svc.cluster.local.
func SiteDNSNames(namespace, group, site string) []string {
	var out []string
	for _, svc := range []string{SiteName(group, site), PrimaryServiceName(group), ReplicasServiceName(group),
		AnyServiceName(group)} {
		out = append(out, svc, svc+"."+namespace, svc+"."+namespace+".svc", svc+"."+namespace+".svc.cluster.local")
	}
	return out
}

// tlsEnabled reports whether the authenticated transport is rendered.
func (r *Router) tlsEnabled() bool { return r.opts.CA != nil && r.opts.CA() != nil }

// ensureSiteTLS issues or renews each site's certificate Secret
// (pki.PlanSecret: a new certificate when missing, broken, in its last
// third of life, or not signed by the current CA; a new bundle when only
// the CA bundle changed). An up-to-date Secret is not written.
func (r *Router) ensureSiteTLS(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	ca := r.opts.CA()
	for _, s := range g.Spec.Sites {
		name := TLSSecretName(g.Name, s.Name)
		var live corev1.Secret
		var data map[string][]byte
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, &live)
		switch {
		case err == nil:
			data = live.Data
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("site tls %s: %w", name, err)
		}
		req := pki.SiteRequest(g.Namespace, g.Name, s.Name, SiteDNSNames(g.Namespace, g.Name, s.Name))
		want, changed, err := pki.PlanSecret(data, ca, req, r.now())
		if err != nil {
			return fmt.Errorf("site tls %s: %w", name, err)
		}
		if !changed {
			continue
		}
		labels := siteLabels(g, s.Name)
		labels[labelComponent] = "tls"
		sec := &corev1.Secret{ObjectMeta: objectMeta(name, g, labels), Type: corev1.SecretTypeTLS, Data: want}
		if err := r.apply(ctx, g, sec, true); err != nil {
			return fmt.Errorf("site tls %s: %w", name, err)
		}
	}
	return nil
}

// withTLS adds the authenticated transport to a site's Pod spec when it is
// on: the TLS volume, mounted read-only into the sidecar, the sidecar's
// flags, and its health port, which the probes use.
func (r *Router) withTLS(g *v1alpha1.MysqlFailoverGroup, s v1alpha1.Site, spec corev1.PodSpec) corev1.PodSpec {
	if !r.tlsEnabled() {
		return spec
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: VolumeTLS, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: TLSSecretName(g.Name, s.Name), DefaultMode: ptr.To[int32](0o444)}}})
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name == ContainerMysqld {
			// mysqld serves the same certificate (my.cnf's ssl_* lines, cnfPaths).
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: VolumeTLS, MountPath: SiteTLSDir, ReadOnly: true})
			continue
		}
		if c.Name != ContainerSidecar {
			continue
		}
		// --mysql-tls-dir: mysqld reloads the certificate when the Secret changes.
		c.Args = append(c.Args, "--tls-dir="+TLSDir, fmt.Sprintf("--health-listen=:%d", SidecarHealthPort),
			"--mysql-tls-dir="+TLSDir)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: VolumeTLS, MountPath: TLSDir, ReadOnly: true})
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: PortNameSidecarHealth, ContainerPort: SidecarHealthPort,
			Protocol: corev1.ProtocolTCP})
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if p != nil && p.HTTPGet != nil {
				p.HTTPGet.Port = intstr.FromInt32(SidecarHealthPort)
			}
		}
	}
	return spec
}

// defaultPeerURL is the peer sidecar's Service port, over HTTPS when the
// authenticated transport is on.
func defaultPeerURL(tls bool) func(ns, group, site string) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return func(ns, group, site string) string {
		return fmt.Sprintf("%s://%s:%d", scheme, SiteServiceHost(ns, group, site), SidecarPort)
	}
}

// IsHTTPS reports whether a URL is https.
func IsHTTPS(u string) bool { return strings.HasPrefix(strings.ToLower(u), "https://") }
