//go:build tools

// Package hack pins the Go tools and libraries that `make deps` and tests need.
package hack

import (
	_ "github.com/Shopify/toxiproxy/v2"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/redis/go-redis/v9"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/external-dns/apis/v1alpha1"
	_ "sigs.k8s.io/external-dns/endpoint"
)
