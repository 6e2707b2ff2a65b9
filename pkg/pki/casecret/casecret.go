package casecret

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/pkg/pki"
)

// Name is the default name of the CA Secret in the operator's namespace.
const Name = "bloodraven-ca"

// The CA Secret holds the signing pair under tls.crt and tls.key, and the
// trust bundle under ca.crt (the signing certificate plus any retired CA
// still trusted during a rotation; see docs/security.md).

// Load reads the CA from its Secret.
func Load(ctx context.Context, r client.Reader, namespace, name string) (*pki.CA, error) {
	var sec corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sec); err != nil {
		return nil, fmt.Errorf("ca secret %s/%s: %w", namespace, name, err)
	}
	ca, err := pki.LoadCA(sec.Data[pki.SecretKeyCert], sec.Data[pki.SecretKeyKey], sec.Data[pki.SecretKeyCA])
	if err != nil {
		return nil, fmt.Errorf("ca secret %s/%s: %w", namespace, name, err)
	}
	return ca, nil
}

// Ensure loads the CA Secret, and creates it with a new CA when it does
// not exist. Two operators racing both end up with the one that was
// created first. An existing Secret is never changed.
func Ensure(ctx context.Context, r client.Reader, w client.Writer, namespace, name string, now time.Time) (*pki.CA, error) {
	ca, err := Load(ctx, r, namespace, name)
	if err == nil || !apierrors.IsNotFound(err) {
		return ca, err
	}
	ca, err = pki.NewCA("bloodraven-ca", now, pki.CAValidity)
	if err != nil {
		return nil, err
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "bloodraven", "app.kubernetes.io/component": "ca"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{pki.SecretKeyCert: ca.CertPEM(), pki.SecretKeyKey: key, pki.SecretKeyCA: ca.BundlePEM()},
	}
	if err := w.Create(ctx, sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return Load(ctx, r, namespace, name)
		}
		return nil, fmt.Errorf("create ca secret %s/%s: %w", namespace, name, err)
	}
	return ca, nil
}
