package routing

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// accountRoles lists the four accounts in a fixed order.
var accountRoles = []string{AccountOperator, AccountReplication, AccountApplication, AccountMonitor}

// defaultUsernames are the usernames of generated Secrets.
var defaultUsernames = map[string]string{
	AccountOperator:    "bloodraven",
	AccountReplication: "repl",
	AccountApplication: "app",
	AccountMonitor:     "monitor",
}

const passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// generatePassword returns n characters from passwordAlphabet, uniformly drawn
// with crypto/rand. Letters and digits only, so a password needs no escaping
// in a DSN, a shell or SQL.
func generatePassword(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	const limit = 256 - 256%len(passwordAlphabet) // reject bytes that would bias the draw
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// ensureSecrets creates each account's Secret that does not exist yet, with
// a random password. An existing Secret is never changed, whoever made it.
func (r *Router) ensureSecrets(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) error {
	for _, role := range accountRoles {
		name := CredentialSecretName(g, role)
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, &corev1.Secret{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("ensure secret %s: %w", name, err)
		}
		if err := r.createSecret(ctx, g, role, name); err != nil {
			return err
		}
	}
	return nil
}

func (r *Router) createSecret(ctx context.Context, g *v1alpha1.MysqlFailoverGroup, role, name string) error {
	pw, err := generatePassword(32)
	if err != nil {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	data := map[string][]byte{
		SecretKeyUsername: []byte(defaultUsernames[role]),
		SecretKeyPassword: []byte(pw),
	}
	if role == AccountApplication {
		data[SecretKeyDatabase] = []byte(DefaultAppDatabase)
	}
	labels := groupLabels(g)
	labels[labelComponent] = "credentials"
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.Namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if err := controllerutil.SetControllerReference(g, sec, r.Scheme); err != nil {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	// Create, not apply: if another writer made it meanwhile, theirs stays.
	if err := r.Client.Create(ctx, sec, client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	return nil
}

// Credentials reads the four accounts' username and password from their Secrets.
func (r *Router) Credentials(ctx context.Context, g *v1alpha1.MysqlFailoverGroup) (Credentials, error) {
	var c Credentials
	dst := map[string]*Account{
		AccountOperator: &c.Operator, AccountReplication: &c.Replication,
		AccountApplication: &c.Application, AccountMonitor: &c.Monitor,
	}
	for _, role := range accountRoles {
		name := CredentialSecretName(g, role)
		var sec corev1.Secret
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, &sec); err != nil {
			return Credentials{}, fmt.Errorf("credentials %s: secret %s: %w", role, name, err)
		}
		user, pw := string(sec.Data[SecretKeyUsername]), string(sec.Data[SecretKeyPassword])
		if user == "" || pw == "" {
			return Credentials{}, fmt.Errorf("credentials %s: secret %s needs keys %q and %q",
				role, name, SecretKeyUsername, SecretKeyPassword)
		}
		*dst[role] = Account{Username: user, Password: pw}
		if role == AccountApplication {
			c.AppDatabase = string(sec.Data[SecretKeyDatabase])
		}
	}
	if c.AppDatabase == "" {
		c.AppDatabase = DefaultAppDatabase
	}
	return c, nil
}
