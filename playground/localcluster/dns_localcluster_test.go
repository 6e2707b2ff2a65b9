//go:build localcluster

package localcluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var dnsEndpoints = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

func dnsEndpoint(name, host, target string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": host, "recordType": "A", "recordTTL": int64(5), "targets": []any{target},
		}}},
	}}
}

// TestDNS: a DNSEndpoint's new target answers through dig within 3 s.
func TestDNS(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	res := dyn.Resource(dnsEndpoints).Namespace("default")
	host := "db." + c.Info.Zone
	if _, err := res.Create(ctx, dnsEndpoint("db", host, "10.250.1.10"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create DNSEndpoint: %v", err)
	}
	waitDig(t, c, host, "10.250.1.10", 10*time.Second)

	cur, err := res.Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := dnsEndpoint("db", host, "10.250.2.10")
	next.SetResourceVersion(cur.GetResourceVersion())
	start := time.Now()
	if _, err := res.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update DNSEndpoint: %v", err)
	}
	waitDig(t, c, host, "10.250.2.10", 3*time.Second)
	t.Logf("target change visible through dig after %.2fs", time.Since(start).Seconds())
}

func waitDig(t *testing.T, c interface {
	Dig(context.Context, string, string) ([]string, error)
}, host, want string, limit time.Duration) {
	t.Helper()
	eventually(t, limit, "dig "+host+" = "+want, func() error {
		got, err := c.Dig(context.Background(), host, "A")
		if err != nil {
			return err
		}
		if strings.Join(got, ",") != want {
			return fmt.Errorf("dig answered %v", got)
		}
		return nil
	})
}
