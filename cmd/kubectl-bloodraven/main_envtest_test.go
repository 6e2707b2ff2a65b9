//go:build envtest

package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/internal/testbed"
	"github.com/shipstream/bloodraven/pkg/plugin"
)

// writeKubeconfig writes a kubeconfig for cfg with two contexts: "default"
// (namespace default, the current one) and "shop" (namespace ns).
func writeKubeconfig(t *testing.T, cfg *rest.Config, ns string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken}
	kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "default"}
	kc.Contexts["shop"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "default"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The command line, through a real kubeconfig, against a real API server.
func TestCommandsAgainstTheAPIServer(t *testing.T) {
	cp := testbed.StartControlPlaneT(t)
	ctx := t.Context()
	ns := "shop"
	if err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MysqlFailoverGroup",
		"metadata": map[string]any{"name": "orders", "namespace": ns},
		"spec": map[string]any{"sites": []any{
			map[string]any{"name": "iad", "zone": "iad"}, map[string]any{"name": "pdx", "zone": "pdx"}}}}}
	if err := cp.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	kc := writeKubeconfig(t, cp.Config, ns)
	cmd := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(args, "--kubeconfig", kc), &out, &errOut, plugin.Connect)
		return out.String() + errOut.String(), err
	}
	annotations := func() map[string]string {
		g := &v1alpha1.MysqlFailoverGroup{}
		if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "orders"}, g); err != nil {
			t.Fatal(err)
		}
		return g.Annotations
	}
	if out, err := cmd("status", "orders", "--context", "shop"); err != nil || !strings.Contains(out, "Group:") {
		t.Fatalf("status in the context's namespace: %v\n%s", err, out)
	}
	if _, err := cmd("status", "orders"); !errors.Is(err, plugin.ErrUnknownGroup) {
		t.Errorf("status in namespace default: %v, want ErrUnknownGroup", err)
	}
	if out, err := cmd("fence", "-n", ns, "orders", "pdx"); err != nil || annotations()[v1alpha1.FencedSitesAnnotation] != "pdx" {
		t.Fatalf("fence: %v\n%s", err, out)
	}
	if _, err := cmd("unfence", "orders", "pdx", "--namespace", ns); err != nil {
		t.Fatal(err)
	}
	if v, ok := annotations()[v1alpha1.FencedSitesAnnotation]; ok {
		t.Fatalf("after unfence the annotation is %q", v)
	}
	if _, err := cmd("fence", "-n", ns, "orders", "sfo"); !errors.Is(err, plugin.ErrUnknownSite) {
		t.Errorf("fence sfo: %v, want ErrUnknownSite", err)
	}
	if out, err := cmd("switchover", "orders", "pdx", "--max-lag-wait", "30s", "-n", ns); err != nil ||
		annotations()[v1alpha1.PlannedFailoverAnnotation] != "pdx:maxLagWait=30s" {
		t.Fatalf("switchover: %v\n%s", err, out)
	}
}
