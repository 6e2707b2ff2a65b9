package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Keys of a TLS Secret, and the names of its files when mounted.
const (
	SecretKeyCert = "tls.crt"
	SecretKeyKey  = "tls.key"
	SecretKeyCA   = "ca.crt"
)

// FileSource reads a certificate, its key and the CA bundle from a folder
// (a mounted TLS Secret: tls.crt, tls.key, ca.crt) and reads them again
// when one of the files changes, which is how a renewal or a CA rotation
// reaches a running sidecar. A change is looked for at most once per
// second; a folder that fails to load keeps the last good credentials.
type FileSource struct {
	Dir string

	mu      sync.Mutex
	checked time.Time
	stamp   string
	cert    *tls.Certificate
	pool    *x509.CertPool
	err     error
}

// NewFileSource loads dir once and fails when it does not hold usable credentials.
func NewFileSource(dir string) (*FileSource, error) {
	s := &FileSource{Dir: dir}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reload(time.Now())
	if s.cert == nil {
		return nil, s.err
	}
	return s, nil
}

// Certificate implements Source.
func (s *FileSource) Certificate() (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reload(time.Now())
	if s.cert == nil {
		return nil, s.err
	}
	return s.cert, nil
}

// Pool implements Source.
func (s *FileSource) Pool() (*x509.CertPool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reload(time.Now())
	if s.pool == nil {
		return nil, s.err
	}
	return s.pool, nil
}

// reload reads the files again when their stamp changed; s.mu is held.
func (s *FileSource) reload(now time.Time) {
	if s.cert != nil && now.Sub(s.checked) < time.Second {
		return
	}
	s.checked = now
	stamp := s.fileStamp()
	if s.cert != nil && stamp == s.stamp {
		return
	}
	cert, pool, err := LoadFiles(s.Dir)
	if err != nil {
		s.err = err
		return
	}
	s.cert, s.pool, s.stamp, s.err = cert, pool, stamp, nil
}

func (s *FileSource) fileStamp() string {
	out := ""
	for _, n := range []string{SecretKeyCert, SecretKeyKey, SecretKeyCA} {
		if fi, err := os.Stat(filepath.Join(s.Dir, n)); err == nil {
			out += fmt.Sprintf("%d/%d;", fi.ModTime().UnixNano(), fi.Size())
		}
	}
	return out
}

// LoadFiles reads tls.crt, tls.key and ca.crt from dir.
func LoadFiles(dir string) (*tls.Certificate, *x509.CertPool, error) {
	read := func(n string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("tls credentials: %w", err)
		}
		return b, nil
	}
	certPEM, err := read(SecretKeyCert)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := read(SecretKeyKey)
	if err != nil {
		return nil, nil, err
	}
	caPEM, err := read(SecretKeyCA)
	if err != nil {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("tls credentials in %s: %w: %w", dir, ErrBadPEM, err)
	}
	roots, err := ParseCertificates(caPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("tls credentials in %s: ca.crt: %w", dir, err)
	}
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	return &cert, pool, nil
}
