package routing

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrViewKeysNotLoaded: Converge needs the public view keys and the operator
// has not loaded its signing key yet; the next reconcile tries again.
var ErrViewKeysNotLoaded = errors.New("view keys not loaded yet")

// RenderViewKeys is the ConfigMap of the public view keys sidecars in ns accept.
// It is shared by every group of the namespace, so it has no owner.
func RenderViewKeys(ns string, pem []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ViewKeysConfigMap, Namespace: ns,
			Labels: map[string]string{labelManagedBy: FieldOwner, labelComponent: viewKeysComponent}},
		Data: map[string]string{ViewKeysKey: string(pem)},
	}
}

// ApplyViewKeys makes ns's ViewKeysConfigMap hold pem, writing only when it
// differs. It reports whether it wrote.
func ApplyViewKeys(ctx context.Context, c client.Client, ns string, pem []byte) (bool, error) {
	want := RenderViewKeys(ns, pem)
	var live corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return false, fmt.Errorf("create %s/%s: %w", ns, ViewKeysConfigMap, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get %s/%s: %w", ns, ViewKeysConfigMap, err)
	case bytes.Equal([]byte(live.Data[ViewKeysKey]), pem):
		return false, nil
	}
	live.Data = want.Data
	if live.Labels == nil {
		live.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		live.Labels[k] = v
	}
	if err := c.Update(ctx, &live); err != nil {
		return false, fmt.Errorf("update %s/%s: %w", ns, ViewKeysConfigMap, err)
	}
	return true, nil
}

// convergeViewKeys applies the group namespace's view keys when the Router
// knows them (Options.ViewKeys).
func (r *Router) convergeViewKeys(ctx context.Context, ns string) error {
	if r.opts.ViewKeys == nil {
		return nil
	}
	pem := r.opts.ViewKeys()
	if len(pem) == 0 {
		return ErrViewKeysNotLoaded
	}
	_, err := ApplyViewKeys(ctx, r.Client, ns, pem)
	return err
}
