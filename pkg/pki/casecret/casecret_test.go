package casecret_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/pkg/pki/casecret"
)

func TestEnsureCreatesOnceAndKeeps(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	ctx := context.Background()
	if _, err := casecret.Load(ctx, c, "ops", casecret.Name); !apierrors.IsNotFound(err) {
		t.Fatalf("Load before Ensure: %v, want not found", err)
	}
	first, err := casecret.Ensure(ctx, c, c, "ops", casecret.Name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	again, err := casecret.Ensure(ctx, c, c, "ops", casecret.Name, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if string(first.CertPEM()) != string(again.CertPEM()) {
		t.Fatal("a second Ensure made a new CA instead of keeping the Secret's")
	}
}

func TestLoadRefusesABrokenSecret(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	broken := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: casecret.Name},
		Data: map[string][]byte{"tls.crt": []byte("not a certificate")}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(broken).Build()
	if _, err := casecret.Load(context.Background(), c, "ops", casecret.Name); err == nil {
		t.Fatal("a Secret without a usable CA was loaded")
	}
	if _, err := casecret.Ensure(context.Background(), c, c, "ops", casecret.Name, time.Now()); err == nil {
		t.Fatal("Ensure replaced or accepted a broken Secret; it must never change an existing one")
	}
}
