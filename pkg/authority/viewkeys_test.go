package authority

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
	"github.com/shipstream/bloodraven/pkg/protocol"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// TestViewKeysLifecycle: the key is created when absent, its public key
// reaches every group namespace, and a rotation (add the next key, swap,
// drop the old one) changes what is signed and accepted step by step. A
// Secret naming too many keys keeps the signer loaded before.
func TestViewKeysLifecycle(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(testGroup("orders", "a", 1),
		&v1alpha1.MysqlFailoverGroup{ObjectMeta: metav1.ObjectMeta{Name: "carts", Namespace: "shop2"}}).Build()
	reg := NewRegistry(func() time.Time { return t0 })
	k := &ViewKeys{Client: c, Reader: c, Namespace: "bloodraven-system", Registry: reg, Log: logr.Discard()}
	ctx := context.Background()
	if err := k.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first := reg.Signer()
	if first == nil {
		t.Fatal("no signer after the first sync")
	}
	accepted := func(ns string) []string {
		t.Helper()
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: routing.ViewKeysConfigMap}, &cm); err != nil {
			t.Fatal(err)
		}
		r, err := protocol.ParseKeyRing([]byte(cm.Data[routing.ViewKeysKey]))
		if err != nil {
			t.Fatal(err)
		}
		return r.IDs()
	}
	for _, ns := range []string{"shop", "shop2"} {
		if ids := accepted(ns); len(ids) != 1 || ids[0] != first.KeyID() {
			t.Fatalf("%s accepts %v, want [%s]", ns, ids, first.KeyID())
		}
	}
	secret := func() *corev1.Secret {
		var sec corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "bloodraven-system", Name: routing.ViewSigningSecret}, &sec); err != nil {
			t.Fatal(err)
		}
		return &sec
	}
	next := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	nextPub, _ := protocol.EncodePublicKeys(next.Public().(ed25519.PublicKey))
	nextPriv, _ := protocol.EncodePrivateKey(next)
	nextID := protocol.KeyID(next.Public().(ed25519.PublicKey))
	oldPub, _ := protocol.EncodePublicKeys(first.Public())
	steps := []struct {
		name     string
		data     map[string][]byte
		signer   string
		accepted int
		wantErr  bool
	}{
		{"1: accept the next key too", map[string][]byte{routing.ViewAcceptedKey: nextPub}, first.KeyID(), 2, false},
		{"2: sign with it, still accept the old", map[string][]byte{routing.ViewSigningKey: nextPriv, routing.ViewAcceptedKey: oldPub}, nextID, 2, false},
		{"a third key is refused, the signer stays", map[string][]byte{routing.ViewAcceptedKey: append(bytes.Clone(oldPub),
			func() []byte {
				p, _ := protocol.EncodePublicKeys(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)).Public().(ed25519.PublicKey))
				return p
			}()...)},
			nextID, 2, true},
		{"3: drop the old key", map[string][]byte{routing.ViewAcceptedKey: nil}, nextID, 1, false},
	}
	for _, st := range steps {
		sec := secret()
		for key, v := range st.data {
			if v == nil {
				delete(sec.Data, key)
			} else {
				sec.Data[key] = v
			}
		}
		if err := c.Update(ctx, sec); err != nil {
			t.Fatal(err)
		}
		err := k.Sync(ctx)
		if (err != nil) != st.wantErr {
			t.Fatalf("%s: Sync = %v", st.name, err)
		}
		if got := reg.Signer().KeyID(); got != st.signer {
			t.Fatalf("%s: signs with %s, want %s", st.name, got, st.signer)
		}
		if ids := accepted("shop"); len(ids) != st.accepted {
			t.Fatalf("%s: shop accepts %v, want %d keys", st.name, ids, st.accepted)
		}
	}
}
