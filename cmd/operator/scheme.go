package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	externaldnsv1alpha1 "sigs.k8s.io/external-dns/apis/v1alpha1"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// newScheme knows the core kinds, MysqlFailoverGroup and external-dns's DNSEndpoint.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme,
		externaldnsv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("scheme: %w", err)
		}
	}
	// external-dns registers its kinds without the meta types.
	metav1.AddToGroupVersion(s, schema.GroupVersion(externaldnsv1alpha1.GroupVersion))
	return s, nil
}
