package authority

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// ViewKeys keeps the view-signing key. It runs on the leader only: it creates
// the routing.ViewSigningSecret in the operator's namespace when absent, loads
// it into the Registry's signer, and writes the public keys sidecars accept
// to the routing.ViewKeysConfigMap of every namespace that holds a group,
// each time they change. It re-reads the Secret every Period, so a rotation
// (docs/security.md, "Signed views") needs no restart.
type ViewKeys struct {
	// Client writes the Secret and the ConfigMaps and lists the groups.
	Client client.Client
	// Reader reads the Secret straight from the API server (the operator's
	// namespace need not be watched).
	Reader    client.Reader
	Namespace string
	Registry  *Registry
	// Period between re-reads of the Secret; 0 means 10 s.
	Period time.Duration
	Log    logr.Logger

	pem atomic.Pointer[[]byte]
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (k *ViewKeys) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (k *ViewKeys) Start(ctx context.Context) error {
	period := k.Period
	if period <= 0 {
		period = 10 * time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := k.Sync(ctx); err != nil {
			k.Log.Error(err, "view keys")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// PublicPEM is the PEM of every accepted public key, nil before the first
// load: routing.Options.ViewKeys.
func (k *ViewKeys) PublicPEM() []byte {
	if p := k.pem.Load(); p != nil {
		return *p
	}
	return nil
}

// Sync reads (or creates) the Secret, writes changed public keys to every
// group namespace, then signs with the Secret's key. A Secret that cannot be
// read keeps the signer loaded before.
func (k *ViewKeys) Sync(ctx context.Context) error {
	sec, err := k.secret(ctx)
	if err != nil {
		return err
	}
	signer, pem, err := ParseSigningSecret(sec)
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", k.Namespace, routing.ViewSigningSecret, err)
	}
	changed := !bytes.Equal(pem, k.PublicPEM())
	k.pem.Store(&pem)
	derr := k.distribute(ctx, pem, changed)
	if cur := k.Registry.Signer(); cur == nil || cur.KeyID() != signer.KeyID() {
		k.Log.Info("signing views", "keyID", signer.KeyID())
	}
	k.Registry.SetSigner(signer)
	return derr
}

// secret reads the signing Secret, creating it with a new key when absent.
func (k *ViewKeys) secret(ctx context.Context) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: k.Namespace, Name: routing.ViewSigningSecret}
	var sec corev1.Secret
	err := k.Reader.Get(ctx, key, &sec)
	if err == nil {
		return &sec, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get secret %s: %w", key, err)
	}
	priv, err := protocol.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	pemKey, err := protocol.EncodePrivateKey(priv)
	if err != nil {
		return nil, err
	}
	sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
		Labels: map[string]string{"app.kubernetes.io/managed-by": routing.FieldOwner}},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{routing.ViewSigningKey: pemKey}}
	err = k.Client.Create(ctx, &sec)
	if apierrors.IsAlreadyExists(err) { // another replica made it first
		if err := k.Reader.Get(ctx, key, &sec); err != nil {
			return nil, fmt.Errorf("get secret %s: %w", key, err)
		}
		return &sec, nil
	}
	if err != nil {
		return nil, fmt.Errorf("create secret %s: %w", key, err)
	}
	k.Log.Info("created the view-signing key", "secret", key.String(), "keyID", protocol.KeyID(priv.Public().(ed25519.PublicKey)))
	return &sec, nil
}

// ParseSigningSecret reads the signer and the PEM of every public key
// sidecars must accept: the signing key's, and accepted.pub's during a
// rotation. The PEM lists keys in key-id order, so swapping which of two keys
// signs does not rewrite it. More than protocol.MaxKeys keys is an error.
func ParseSigningSecret(sec *corev1.Secret) (*protocol.Signer, []byte, error) {
	priv, err := protocol.ParsePrivateKey(sec.Data[routing.ViewSigningKey])
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", routing.ViewSigningKey, err)
	}
	signer, err := protocol.NewSigner(priv)
	if err != nil {
		return nil, nil, err
	}
	pubs := []ed25519.PublicKey{signer.Public()}
	if extra := sec.Data[routing.ViewAcceptedKey]; len(bytes.TrimSpace(extra)) > 0 {
		more, err := protocol.ParsePublicKeys(extra)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", routing.ViewAcceptedKey, err)
		}
		pubs = append(pubs, more...)
	}
	if _, err := protocol.NewKeyRing(pubs...); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(pubs, func(a, b ed25519.PublicKey) int {
		return bytes.Compare([]byte(protocol.KeyID(a)), []byte(protocol.KeyID(b)))
	})
	pem, err := protocol.EncodePublicKeys(pubs...)
	if err != nil {
		return nil, nil, err
	}
	return signer, pem, nil
}

// distribute writes pem to the ViewKeysConfigMap of every namespace holding a
// group. When the keys did not change it still checks each ConfigMap (a
// deleted one comes back), which costs one cached read per namespace.
func (k *ViewKeys) distribute(ctx context.Context, pem []byte, changed bool) error {
	var groups v1alpha1.MysqlFailoverGroupList
	if err := k.Client.List(ctx, &groups); err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	seen := map[string]bool{}
	var firstErr error
	for _, g := range groups.Items {
		if seen[g.Namespace] {
			continue
		}
		seen[g.Namespace] = true
		wrote, err := routing.ApplyViewKeys(ctx, k.Client, g.Namespace, pem)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if wrote || (changed && err == nil) {
			k.Log.Info("published view keys", "namespace", g.Namespace)
		}
	}
	return firstErr
}
