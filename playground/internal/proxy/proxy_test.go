package proxy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

func TestRender(t *testing.T) {
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = svcs.Add(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "x"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.20", Ports: []corev1.ServicePort{{Name: "mysql", Port: 3306, Protocol: corev1.ProtocolTCP}}},
	})
	name, port, no := "mysql", int32(3307), false
	_ = slices.Add(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "db-1", Namespace: "x", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.250.1.2"}},
			{Addresses: []string{"10.250.2.2"}},
			{Addresses: []string{"10.250.2.9"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
		},
	})
	p := &Proxy{hairpin: "10.250.0.1", serviceCIDR: "10.96.0.0/16", services: corev1listers.NewServiceLister(svcs), slices: discoverylisters.NewEndpointSliceLister(slices)}
	out, err := p.render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ip daddr 10.96.0.20 tcp dport 3306 jump svc1",
		"numgen random mod 2 vmap { 0 : jump svc1e0, 1 : jump svc1e1 }",
		"meta l4proto tcp dnat to 10.250.1.2:3307",
		"meta l4proto tcp dnat to 10.250.2.2:3307",
		"ct status dnat ip saddr 10.250.1.2 ip daddr 10.250.1.2 snat to 10.250.0.1",
		"ip daddr 10.96.0.0/16 meta l4proto tcp reject with tcp reset",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "10.250.2.9") {
		t.Errorf("a not-ready endpoint is in the rules:\n%s", out)
	}
}
