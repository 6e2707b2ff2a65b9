package certreload

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate and PKCS#8 key (throwaway, for tests).
func selfSigned(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "site"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWatcher walks one Watcher through a site's life: no certificate yet,
// issued, unchanged, rotated, a mismatched pair, mysqld refusing, fixed.
func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	f := Files{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
	var reloads int
	var refuse error
	w := &Watcher{Files: f, Reload: func(context.Context) error {
		if refuse != nil {
			return refuse
		}
		reloads++
		return nil
	}}
	c1, k1 := selfSigned(t, 1)
	c2, k2 := selfSigned(t, 2)
	c3, k3 := selfSigned(t, 3)
	down := errors.New("mysqld not up")
	steps := []struct {
		name         string
		do           func()
		wantReloaded bool
		wantErr      error
		wantReloads  int
	}{
		{"no certificate files: nothing to do", func() {}, false, nil, 0},
		{"first poll with files reloads once", func() { write(t, f.CA, c1); write(t, f.Cert, c1); write(t, f.Key, k1) },
			true, nil, 1},
		{"unchanged: no reload", func() {}, false, nil, 1},
		{"rotated: reload", func() { write(t, f.Cert, c2); write(t, f.Key, k2) }, true, nil, 2},
		{"a key that does not match is never loaded", func() { write(t, f.Key, k3) }, false, ErrInvalidPair, 2},
		{"a CA bundle without a certificate is never loaded", func() { write(t, f.Key, k2); write(t, f.CA, []byte("junk")) },
			false, ErrInvalidPair, 2},
		{"mysqld refusing is retried", func() { write(t, f.CA, c1); write(t, f.Cert, c3); write(t, f.Key, k3); refuse = down },
			false, down, 2},
		{"and succeeds once mysqld takes it", func() { refuse = nil }, true, nil, 3},
		{"then rests", func() {}, false, nil, 3},
	}
	for _, s := range steps {
		s.do()
		got, err := w.Check(context.Background())
		if got != s.wantReloaded || !errors.Is(err, s.wantErr) || reloads != s.wantReloads {
			t.Fatalf("%s: reloaded %v, err %v, reloads %d; want %v, %v, %d",
				s.name, got, err, reloads, s.wantReloaded, s.wantErr, s.wantReloads)
		}
	}
}
