package routing

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// With the authenticated transport on, every site's Pod mounts its own
// certificate Secret read-only into mysqld where my.cnf points, and the
// sidecar watches it for rotation; without it, my.cnf names no TLS file.
func TestSitePodMountsItsCertificate(t *testing.T) {
	now := time.Now()
	r, _, _ := tlsRouter(t, &now)
	g := tlsGroup()
	for _, s := range g.Spec.Sites {
		spec := r.renderDeployment(g, s).Spec.Template.Spec
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == VolumeTLS })
		if i < 0 || spec.Volumes[i].Secret == nil {
			t.Fatalf("%s: no %s Secret volume in %+v", s.Name, VolumeTLS, spec.Volumes)
		}
		sec := spec.Volumes[i].Secret
		if sec.SecretName != TLSSecretName(g.Name, s.Name) || (sec.Optional != nil && *sec.Optional) {
			t.Errorf("%s: volume %+v, want required Secret %s", s.Name, sec, TLSSecretName(g.Name, s.Name))
		}
		mysqld := spec.Containers[slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == ContainerMysqld })]
		if !slices.Contains(mysqld.VolumeMounts, corev1.VolumeMount{Name: VolumeTLS, MountPath: SiteTLSDir, ReadOnly: true}) {
			t.Errorf("%s: mysqld mounts %+v, want %s read-only at %s", s.Name, mysqld.VolumeMounts, VolumeTLS, SiteTLSDir)
		}
		side := spec.Containers[slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == ContainerSidecar })]
		if !slices.Contains(side.Args, "--mysql-tls-dir="+TLSDir) {
			t.Errorf("%s: the sidecar does not watch the certificate for rotation: %v", s.Name, side.Args)
		}
		cnf := effective(r.renderConfigMap(g, s).Data[configMapKey])
		if cnf["ssl_cert"] != PodTLSFiles.Cert || cnf["ssl_key"] != PodTLSFiles.Key || cnf["ssl_ca"] != PodTLSFiles.CA {
			t.Errorf("my.cnf TLS %q %q %q does not point into the mount", cnf["ssl_cert"], cnf["ssl_key"], cnf["ssl_ca"])
		}
	}
	plain := New(nil, nil, Options{OperatorURL: "http://op:8081"})
	if cnf := effective(plain.renderConfigMap(g, g.Spec.Sites[0]).Data[configMapKey]); cnf["ssl_cert"] != "" {
		t.Errorf("without a CA my.cnf names %q, a file no Pod mounts", cnf["ssl_cert"])
	}
}
