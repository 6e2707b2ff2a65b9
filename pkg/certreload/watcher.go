package certreload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// ErrInvalidPair: the files are there but do not form a usable
// certificate, key and CA bundle; mysqld is not asked to load them.
var ErrInvalidPair = errors.New("certificate files unusable")

// Files are the paths of the certificate, its key and the CA bundle.
type Files struct {
	Cert, Key, CA string
}

// Watcher reloads mysqld's TLS when Files change. Check is one poll; Run
// polls every Interval until its context ends.
type Watcher struct {
	Files Files
	// Reload asks mysqld to load the files again.
	Reload func(ctx context.Context) error
	// Interval between polls (default 10 s); Timeout bounds one Reload
	// (default 5 s).
	Interval, Timeout time.Duration
	Logger            *slog.Logger

	loaded [sha256.Size]byte // digest of the files mysqld last loaded
	ok     bool              // loaded is known
}

// Check polls once. It reports whether it had mysqld reload; an error
// means the files changed but could not be loaded, and the next Check tries
// again.
func (w *Watcher) Check(ctx context.Context) (bool, error) {
	sum, present, err := w.read()
	if err != nil || !present || (w.ok && sum == w.loaded) {
		return false, err
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := w.Reload(rctx); err != nil {
		return false, fmt.Errorf("reload mysqld TLS: %w", err)
	}
	w.loaded, w.ok = sum, true
	return true, nil
}

// read returns the digest of the three files, false when any is missing,
// and ErrInvalidPair when they do not parse or the key does not match.
func (w *Watcher) read() ([sha256.Size]byte, bool, error) {
	var none [sha256.Size]byte
	var parts [3][]byte
	for i, p := range []string{w.Files.Cert, w.Files.Key, w.Files.CA} {
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return none, false, nil
		case err != nil:
			return none, false, fmt.Errorf("read %s: %w", p, err)
		}
		parts[i] = b
	}
	if _, err := tls.X509KeyPair(parts[0], parts[1]); err != nil {
		return none, true, fmt.Errorf("%w: %s and %s: %w", ErrInvalidPair, w.Files.Cert, w.Files.Key, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(parts[2]) {
		return none, true, fmt.Errorf("%w: %s holds no certificate", ErrInvalidPair, w.Files.CA)
	}
	return sha256.Sum256(bytes.Join(parts[:], []byte{0})), true, nil
}

// Run polls until ctx ends, logging each reload and each failure.
func (w *Watcher) Run(ctx context.Context) {
	interval := w.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	last := "" // the last failure logged: a lasting one is logged once
	for {
		switch reloaded, err := w.Check(ctx); {
		case err != nil && err.Error() != last:
			last = err.Error()
			log.Warn("mysqld TLS not reloaded; retrying", "err", err)
		case err == nil:
			last = ""
			if reloaded {
				log.Info("mysqld TLS reloaded", "cert", w.Files.Cert)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
