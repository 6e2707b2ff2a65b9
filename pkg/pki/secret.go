package pki

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CASecretName is the default name of the CA Secret in the operator's namespace.
const CASecretName = "bloodraven-ca"

// The CA Secret holds the signing pair under tls.crt and tls.key, and the
// trust bundle under ca.crt (the signing certificate plus any retired CA
// still trusted during a rotation; see docs/security.md).

// LoadCASecret reads the CA from its Secret.
func LoadCASecret(ctx context.Context, r client.Reader, namespace, name string) (*CA, error) {
	var sec corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sec); err != nil {
		return nil, fmt.Errorf("ca secret %s/%s: %w", namespace, name, err)
	}
	ca, err := LoadCA(sec.Data[SecretKeyCert], sec.Data[SecretKeyKey], sec.Data[SecretKeyCA])
	if err != nil {
		return nil, fmt.Errorf("ca secret %s/%s: %w", namespace, name, err)
	}
	return ca, nil
}

// EnsureCA loads the CA Secret, and creates it with a new CA when it does
// not exist. Two operators racing both end up with the one that was
// created first. An existing Secret is never changed.
func EnsureCA(ctx context.Context, r client.Reader, w client.Writer, namespace, name string, now time.Time) (*CA, error) {
	ca, err := LoadCASecret(ctx, r, namespace, name)
	if err == nil || !apierrors.IsNotFound(err) {
		return ca, err
	}
	ca, err = NewCA("bloodraven-ca", now, CAValidity)
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
		Data: map[string][]byte{SecretKeyCert: ca.CertPEM(), SecretKeyKey: key, SecretKeyCA: ca.BundlePEM()},
	}
	if err := w.Create(ctx, sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return LoadCASecret(ctx, r, namespace, name)
		}
		return nil, fmt.Errorf("create ca secret %s/%s: %w", namespace, name, err)
	}
	return ca, nil
}
