package routing

import (
	"context"
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/pki"
)

func tlsGroup() *v1alpha1.MysqlFailoverGroup {
	return &v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", UID: "u1"},
		Spec: v1alpha1.MysqlFailoverGroupSpec{Sites: []v1alpha1.Site{{Name: "iad"}, {Name: "pdx"}}}}
}

func tlsRouter(t *testing.T, now *time.Time) (*Router, *pki.CA, client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	ca, err := pki.NewCA("test", *now, pki.CAValidity)
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	r := New(c, s, Options{OperatorURL: "https://op:8091", CA: func() *pki.CA { return ca },
		Now: func() time.Time { return *now }})
	return r, ca, c
}

func siteSecret(t *testing.T, c client.Client, site string) *corev1.Secret {
	t.Helper()
	var sec corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: TLSSecretName("orders", site)}, &sec); err != nil {
		t.Fatal(err)
	}
	return &sec
}

func leaf(t *testing.T, sec *corev1.Secret) *x509.Certificate {
	t.Helper()
	certs, err := pki.ParseCertificates(sec.Data[pki.SecretKeyCert])
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

func TestSiteTLSSecrets(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	r, ca, c := tlsRouter(t, &now)
	g := tlsGroup()
	ctx := context.Background()
	if err := r.ensureSiteTLS(ctx, g); err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"iad", "pdx"} {
		sec := siteSecret(t, c, site)
		cert := leaf(t, sec)
		id, err := pki.Verify([]*x509.Certificate{cert}, ca.Pool(), now, x509.ExtKeyUsageServerAuth)
		if err != nil || id != pki.SiteIdentity("shop", "orders", site) {
			t.Fatalf("%s: identity %s, %v", site, id, err)
		}
		if !slices.Contains(cert.DNSNames, SiteServiceHost("shop", "orders", site)) ||
			!slices.Contains(cert.DNSNames, "orders-primary.shop.svc") {
			t.Fatalf("%s: DNS names %v", site, cert.DNSNames)
		}
		if sec.Type != corev1.SecretTypeTLS || len(sec.OwnerReferences) != 1 || string(sec.Data[pki.SecretKeyCA]) != string(ca.BundlePEM()) {
			t.Fatalf("%s: type %s owners %v", site, sec.Type, sec.OwnerReferences)
		}
	}
	first := siteSecret(t, c, "iad")
	now = now.Add(30 * 24 * time.Hour)
	if err := r.ensureSiteTLS(ctx, g); err != nil {
		t.Fatal(err)
	}
	if again := siteSecret(t, c, "iad"); again.ResourceVersion != first.ResourceVersion {
		t.Fatal("a good certificate was rewritten")
	}
	now = now.Add(31 * 24 * time.Hour) // day 61: the last third
	if err := r.ensureSiteTLS(ctx, g); err != nil {
		t.Fatal(err)
	}
	renewed := leaf(t, siteSecret(t, c, "iad"))
	if !renewed.NotAfter.After(leaf(t, first).NotAfter) {
		t.Fatal("a certificate in its last third was not renewed")
	}
}

func TestPodSpecWithTLS(t *testing.T) {
	now := time.Now()
	r, _, _ := tlsRouter(t, &now)
	g := tlsGroup()
	g.Spec.Sidecar.LeaseTimeout.Duration = 20 * time.Second
	g.Spec.Sidecar.PeerCheckInterval.Duration = 5 * time.Second
	spec := r.renderPodSpec(g, g.Spec.Sites[0])
	var secrets []string
	for _, v := range spec.Volumes {
		if v.Secret != nil && strings.HasSuffix(v.Secret.SecretName, "-tls") {
			secrets = append(secrets, v.Secret.SecretName)
		}
	}
	if !slices.Equal(secrets, []string{"orders-iad-tls"}) {
		t.Fatalf("iad's Pod mounts TLS Secrets %v, want only its own", secrets)
	}
	var sc corev1.Container
	for _, c := range spec.Containers {
		if c.Name == ContainerSidecar {
			sc = c
		}
	}
	args := strings.Join(sc.Args, " ")
	for _, want := range []string{"--tls-dir=" + TLSDir, "--health-listen=:8081", "--operator-url=https://op:8091",
		"pdx=https://orders-pdx.shop.svc:8080"} {
		if !strings.Contains(args, want) {
			t.Errorf("sidecar args %q lack %q", args, want)
		}
	}
	for _, p := range []*corev1.Probe{sc.ReadinessProbe, sc.LivenessProbe} {
		if p.HTTPGet.Port.IntValue() != SidecarHealthPort || p.HTTPGet.Scheme != corev1.URISchemeHTTP {
			t.Errorf("probe %+v: want plain HTTP on the health port", p.HTTPGet)
		}
	}
	mounted := false
	for _, m := range sc.VolumeMounts {
		mounted = mounted || (m.Name == VolumeTLS && m.MountPath == TLSDir && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("sidecar mounts %+v, want %s read-only at %s", sc.VolumeMounts, VolumeTLS, TLSDir)
	}
}

func TestPodSpecWithoutCAUnchanged(t *testing.T) {
	r := New(nil, runtime.NewScheme(), Options{OperatorURL: "http://op:8090"})
	g := tlsGroup()
	spec := r.renderPodSpec(g, g.Spec.Sites[0])
	for _, v := range spec.Volumes {
		if v.Name == VolumeTLS {
			t.Fatal("a TLS volume without a CA")
		}
	}
	if args := strings.Join(r.SidecarArgs(g, "iad"), " "); !strings.Contains(args, "pdx=http://orders-pdx.shop.svc:8080") {
		t.Fatalf("legacy peers: %s", args)
	}
}

func TestNetworkPolicy(t *testing.T) {
	r := New(nil, runtime.NewScheme(), Options{OperatorURL: "https://op:8091", NetworkPolicy: &NetworkPolicyOptions{
		OperatorNamespace: "bloodraven-system", OperatorPodLabels: map[string]string{"app.kubernetes.io/name": "bloodraven"}}})
	np := r.renderNetworkPolicy(tlsGroup())
	if np.Name != "orders-sites" || np.Spec.PodSelector.MatchLabels[v1alpha1.LabelGroup] != "orders" {
		t.Fatalf("policy %s selects %v", np.Name, np.Spec.PodSelector.MatchLabels)
	}
	in := np.Spec.Ingress
	if len(in) != 3 {
		t.Fatalf("%d ingress rules", len(in))
	}
	peerRule := in[0]
	if len(peerRule.From) != 2 || peerRule.From[1].NamespaceSelector.MatchLabels[labelNamespaceName] != "bloodraven-system" ||
		peerRule.Ports[1].Port.IntValue() != SidecarPort {
		t.Fatalf("peer rule %+v", peerRule)
	}
	if len(in[1].From) != 0 || in[1].Ports[0].Port.IntValue() != MySQLPort {
		t.Fatalf("application rule %+v", in[1])
	}
}
