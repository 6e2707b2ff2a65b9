package testbed

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ObjectStore is a versitygw S3 gateway on loopback over a folder: a real
// S3-compatible store for the backup tests (installed by make deps).
type ObjectStore struct {
	// Endpoint is "http://127.0.0.1:<port>"; the store wants path-style
	// addressing and SigV4 with the keys below.
	Endpoint  string
	AccessKey string
	SecretKey string
	// Dir is the folder it serves: a bucket is a folder, an object a file.
	Dir  string
	proc *process
}

// StartObjectStore starts versitygw for one test and stops it when the test
// ends. It fails the test when versitygw is missing: run make deps.
func StartObjectStore(t testing.TB) *ObjectStore {
	t.Helper()
	s, err := NewObjectStore(t.TempDir(), t)
	if err != nil {
		t.Fatalf("start object store: %v", err)
	}
	return s
}

// NewObjectStore starts versitygw serving a folder under dir and registers
// its stop with cl.
func NewObjectStore(dir string, cl Cleaner) (*ObjectStore, error) {
	bin, err := findVersitygw()
	if err != nil {
		return nil, err
	}
	s := &ObjectStore{AccessKey: "bloodraven", SecretKey: "bloodraven-secret", Dir: filepath.Join(dir, "s3")}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	for attempt := 0; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort(Host, strconv.Itoa(port))
		logPath := filepath.Join(dir, "versitygw.log")
		p, err := startProcessEnv("versitygw", logPath, []string{bin, "--port", addr, "posix", s.Dir},
			[]string{"ROOT_ACCESS_KEY=" + s.AccessKey, "ROOT_SECRET_KEY=" + s.SecretKey})
		if err != nil {
			return nil, err
		}
		err = waitListening(addr, p, 30*time.Second)
		if err == nil {
			s.proc, s.Endpoint = p, "http://"+addr
			cl.Cleanup(func() { p.stop(5 * time.Second) })
			return s, nil
		}
		p.kill()
		if !errors.Is(err, errExited) || attempt == 3 {
			return nil, fmt.Errorf("versitygw on %s: %w\n%s", addr, err, tail(logPath, 15))
		}
	}
}

// errExited: the process ended while it was being waited for (a port taken
// by someone else, most often).
var errExited = errors.New("exited during start")

// waitListening polls until addr accepts a connection.
func waitListening(addr string, p *process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		switch {
		case err == nil:
			_ = c.Close()
			return nil
		case p.exited():
			return fmt.Errorf("%w: %v", errExited, p.err)
		case time.Now().After(deadline):
			return fmt.Errorf("not listening after %s: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findVersitygw looks in make deps' folder first, then on PATH.
func findVersitygw() (string, error) {
	p := filepath.Join(cacheDir(), "bin", "versitygw")
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	if p, err := findBinary("versitygw"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("versitygw not found at %s or on PATH: run make deps", p)
}
