package routing

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// Every site's Pod carries its own certificate Secret, mounted read-only
// into mysqld where my.cnf points, and required: a mysqld without it could
// not serve replicas that must log in with X509.
func TestSitePodMountsItsCertificate(t *testing.T) {
	g := &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
		Spec: v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "iad"}, {Name: "pdx"}}}}
	r := New(nil, nil, Options{OperatorURL: "http://op:8081"})
	for _, s := range g.Spec.Sites {
		spec := r.renderDeployment(g, s).Spec.Template.Spec
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == VolumeSiteTLS })
		if i < 0 || spec.Volumes[i].Secret == nil {
			t.Fatalf("%s: no %s Secret volume in %+v", s.Name, VolumeSiteTLS, spec.Volumes)
		}
		sec := spec.Volumes[i].Secret
		if sec.SecretName != "orders-"+s.Name+"-tls" || (sec.Optional != nil && *sec.Optional) {
			t.Errorf("%s: volume %+v, want required Secret orders-%s-tls", s.Name, sec, s.Name)
		}
		mysqld := spec.Containers[slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == ContainerMysqld })]
		if !slices.Contains(mysqld.VolumeMounts, corev1.VolumeMount{Name: VolumeSiteTLS, MountPath: SiteTLSDir, ReadOnly: true}) {
			t.Errorf("%s: mysqld mounts %+v, want %s read-only at %s", s.Name, mysqld.VolumeMounts, VolumeSiteTLS, SiteTLSDir)
		}
		if !slices.Contains(r.SidecarArgs(g, s.Name), "--mysql-tls-dir="+SiteTLSDir) {
			t.Errorf("%s: the sidecar does not watch the certificate for rotation", s.Name)
		}
	}
	cnf := effective(RenderMyCnf(v1alpha1.FlavorMariaDB, "iad", "", v1alpha1.MySQLTLSSpec{}))
	if cnf["ssl_cert"] != PodTLSFiles.Cert || cnf["ssl_key"] != PodTLSFiles.Key || cnf["ssl_ca"] != PodTLSFiles.CA {
		t.Errorf("my.cnf TLS %q %q %q does not point into the mount", cnf["ssl_cert"], cnf["ssl_key"], cnf["ssl_ca"])
	}
	if got := SiteTLSSecretName("orders", "iad"); got != "orders-iad-tls" {
		t.Errorf("SiteTLSSecretName = %q", got)
	}
}
